// Covers at the size a device asks for (`BL-…` image ids are cover tokens), greyscale for e-ink when asked. Each
// rendering is kept under <dataDir>/cache/kobo-covers: the token changes with every new cover, so a kept file is
// never stale.
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { coverFile } from '../covers/cover-store.ts';
import type { Db } from '../store/store.ts';
import { loadSharp } from '../covers/sharp-loader.ts';

/** Largest side rendered; bigger requests get this. */
export const MAX_THUMBNAIL_SIDE = 2000;

export interface ThumbnailRequest {
  coverHash: string;
  width: number;
  height: number;
  greyscale: boolean;
}

export const isCoverToken = (imageId: string): boolean => /^BL-[0-9A-Z]{1,32}$/.test(imageId);

/** The book whose current cover the token names. */
export async function bookOfCover(db: Db, coverHash: string): Promise<number | undefined> {
  const row = await db.selectFrom('book').select('id').where('book_cover_hash', '=', coverHash).orderBy('id').executeTakeFirst();
  return row?.id;
}

const side = (value: number): number => Math.max(1, Math.min(MAX_THUMBNAIL_SIDE, Math.trunc(value)));

/** The JPEG for a request, or undefined when the book has no cover file. */
export async function koboThumbnail(coversRoot: string, cacheRoot: string, bookId: number, request: ThumbnailRequest): Promise<Buffer | undefined> {
  const width = side(request.width);
  const height = side(request.height);
  const dir = join(cacheRoot, 'kobo-covers');
  const cached = join(dir, `${request.coverHash}-${width}x${height}${request.greyscale ? '-grey' : ''}.jpg`);
  const hit = await readFile(cached).catch(() => undefined);
  if (hit) return hit;
  const full = coverFile(coversRoot, bookId, 'book', 'cover');
  const source = (await stat(full).catch(() => undefined))?.isFile() ? full : coverFile(coversRoot, bookId, 'book', 'thumbnail');
  const input = await readFile(source).catch(() => undefined);
  if (!input) return undefined;
  const sharp = await loadSharp();
  let image = sharp(input, { failOn: 'none' }).rotate().resize(width, height, { fit: 'inside', withoutEnlargement: true });
  if (request.greyscale) image = image.greyscale().toColourspace('b-w');
  const jpeg = await image.jpeg({ quality: 85, mozjpeg: false }).toBuffer();
  await mkdir(dir, { recursive: true });
  const tmp = `${cached}.${process.pid}.tmp`;
  await writeFile(tmp, jpeg).then(() => rename(tmp, cached)).catch(() => undefined);
  return jpeg;
}

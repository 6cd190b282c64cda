// Author photos under the data directory, as Grimmory lays them out: author-images/<authorId>/{photo,thumbnail}.jpg.
// The photo is the image bounded to 1000×1500; the thumbnail a centred 250×350 crop of it (the author cards' shape).
// An author "has a photo" when the thumbnail exists.
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadSharp } from '../covers/sharp-loader.ts';
import { checkCoverImage } from '../covers/cover-upload.ts';
import { LIMITS } from '../formats/limits.ts';

export type AuthorPhotoVariant = 'photo' | 'thumbnail';

const PHOTO_BOX: [number, number] = [1000, 1500];
const THUMBNAIL_SIZE: [number, number] = [250, 350];

export function authorImagesRoot(dataDir: string): string {
  return join(dataDir, 'author-images');
}

export function authorPhotoFile(root: string, authorId: number, variant: AuthorPhotoVariant): string {
  return join(root, String(authorId), `${variant}.jpg`);
}

export interface AuthorImages {
  photo: Buffer;
  thumbnail: Buffer;
}

/**
 * The photo and thumbnail of an image. Refuses anything that is not a real JPEG, PNG or WebP within the pixel limit
 * (CoverImageError), whatever the upload or the server said it was.
 */
export async function makeAuthorImages(input: Buffer): Promise<AuthorImages> {
  const sharp = await loadSharp();
  await checkCoverImage(input);
  const options = { limitInputPixels: LIMITS.maxImagePixels, failOn: 'error' as const, animated: false };
  const photo = await sharp(input, options)
    .rotate()
    .flatten({ background: '#ffffff' })
    .toColourspace('srgb')
    .resize(PHOTO_BOX[0], PHOTO_BOX[1], { fit: 'inside', withoutEnlargement: true })
    .jpeg({ quality: 85 })
    .toBuffer();
  const thumbnail = await sharp(photo, options)
    .resize(THUMBNAIL_SIZE[0], THUMBNAIL_SIZE[1], { fit: 'cover', position: 'centre' })
    .jpeg({ quality: 80 })
    .toBuffer();
  return { photo, thumbnail };
}

/** Each file replaces the old one at once (a reader sees the old image or the new one, never half of one). */
async function writeAtomically(path: string, data: Buffer): Promise<void> {
  const tmp = `${path}.${randomUUID()}.tmp`;
  try {
    await writeFile(tmp, data);
    await rename(tmp, path);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
}

/** The photo first, then the thumbnail: the author only counts as having a photo once both are in place. */
export async function saveAuthorImages(root: string, authorId: number, images: AuthorImages): Promise<void> {
  await mkdir(join(root, String(authorId)), { recursive: true });
  await writeAtomically(authorPhotoFile(root, authorId, 'photo'), images.photo);
  await writeAtomically(authorPhotoFile(root, authorId, 'thumbnail'), images.thumbnail);
}

export async function removeAuthorImages(root: string, authorId: number): Promise<void> {
  await rm(join(root, String(authorId)), { recursive: true, force: true });
}

/** Ids of the authors that have a thumbnail: one directory listing and a stat per author folder, not per author. */
export async function authorIdsWithPhoto(root: string): Promise<Set<number>> {
  const names = await readdir(root).catch(() => [] as string[]);
  const ids = new Set<number>();
  await Promise.all(
    names
      .filter((name) => /^\d+$/.test(name))
      .map(async (name) => {
        const info = await stat(authorPhotoFile(root, Number(name), 'thumbnail')).catch(() => undefined);
        if (info?.isFile()) ids.add(Number(name));
      }),
  );
  return ids;
}

export async function hasAuthorPhoto(root: string, authorId: number): Promise<boolean> {
  const info = await stat(authorPhotoFile(root, authorId, 'thumbnail')).catch(() => undefined);
  return info?.isFile() === true;
}

export interface AuthorPhotoResource {
  path: string;
  size: number;
  etag: string;
  lastModified: Date;
}

/** The stored file with validators that change whenever it is replaced; undefined when there is none. */
export async function authorPhotoResource(root: string, authorId: number, variant: AuthorPhotoVariant): Promise<AuthorPhotoResource | undefined> {
  const path = authorPhotoFile(root, authorId, variant);
  const info = await stat(path, { bigint: true }).catch(() => undefined);
  if (!info?.isFile()) return undefined;
  const size = Number(info.size);
  return {
    path,
    size,
    etag: `"author-${authorId}-${variant}-${size.toString(36)}-${info.mtimeNs.toString(36)}"`,
    lastModified: new Date(Number(info.mtimeMs)),
  };
}

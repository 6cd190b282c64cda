// Cover files under the data directory: covers/<bookId>/{cover,thumbnail,audiobook-cover,audiobook-thumbnail}.jpg
import { randomInt } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CoverImages, CoverKind } from './cover-images.ts';

export function coverDir(coversRoot: string, bookId: number): string {
  return join(coversRoot, String(bookId));
}

export function coverFile(coversRoot: string, bookId: number, kind: CoverKind, variant: 'cover' | 'thumbnail'): string {
  const prefix = kind === 'audiobook' ? 'audiobook-' : '';
  return join(coverDir(coversRoot, bookId), `${prefix}${variant}.jpg`);
}

async function writeAtomically(path: string, data: Buffer): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, data);
  await rename(tmp, path);
}

export async function saveCoverImages(coversRoot: string, bookId: number, kind: CoverKind, images: CoverImages): Promise<void> {
  // A folder made just now has no files anyone could be reading: write them in place, without a rename each.
  const created = await mkdir(coverDir(coversRoot, bookId), { recursive: true });
  const write = created === undefined ? writeAtomically : writeFile;
  await Promise.all([write(coverFile(coversRoot, bookId, kind, 'cover'), images.cover), write(coverFile(coversRoot, bookId, kind, 'thumbnail'), images.thumbnail)]);
}

export async function removeCovers(coversRoot: string, bookId: number): Promise<void> {
  await rm(coverDir(coversRoot, bookId), { recursive: true, force: true });
}

const HASH_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** Cover identity token that changes with every new cover (Kobo uses it as ImageId): `BL-` + 13 of [0-9A-Z]. */
export function newCoverHash(): string {
  let out = 'BL-';
  for (let i = 0; i < 13; i++) out += HASH_ALPHABET[randomInt(HASH_ALPHABET.length)];
  return out;
}

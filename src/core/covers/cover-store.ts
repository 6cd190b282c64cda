// Cover files under the data directory: covers/<bookId>/{cover,thumbnail,audiobook-cover,audiobook-thumbnail}.jpg
import { randomInt, randomUUID } from 'node:crypto';
import { copyFileSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Liveness } from '../store/liveness.ts';
import { markStatus, WORK_MARK, workMark } from '../work-files.ts';
import type { CoverImages, CoverKind, CoverSink } from './cover-images.ts';

export type { CoverSink };

/**
 * Cover images already written to a scan's staging folder by the worker that made them, so their bytes never pass
 * through the main thread (where they were garbage only a full collection frees, and a main-heap that grew with
 * every book scanned).
 */
export interface StagedCoverImages {
  /** A staging folder holding just these two files, named as a book's cover folder names them. */
  dir?: string;
  coverPath: string;
  /** Absent when the thumbnail is left to be made later (a scan's covers: see thumbnail-backlog.ts). */
  thumbnailPath?: string;
  width: number;
  height: number;
}

export function coverDir(coversRoot: string, bookId: number): string {
  return join(coversRoot, String(bookId));
}

function coverName(kind: CoverKind, variant: 'cover' | 'thumbnail'): string {
  return `${kind === 'audiobook' ? 'audiobook-' : ''}${variant}.jpg`;
}

export function coverFile(coversRoot: string, bookId: number, kind: CoverKind, variant: 'cover' | 'thumbnail'): string {
  return join(coverDir(coversRoot, bookId), coverName(kind, variant));
}

async function writeAtomically(path: string, data: Buffer): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, data);
  await rename(tmp, path);
}

export function isStaged(images: CoverImages | StagedCoverImages): images is StagedCoverImages {
  return 'coverPath' in images;
}

/**
 * Puts a book's cover and thumbnail in place. Staged files are moved (each rename replaces the old file at once),
 * or copied when `keepStaged` because the same images are saved a second time.
 */
export async function saveCoverImages(coversRoot: string, bookId: number, kind: CoverKind, images: CoverImages | StagedCoverImages, keepStaged = false): Promise<void> {
  const dir = coverDir(coversRoot, bookId);
  if (isStaged(images)) {
    placeStaged(dir, kind, images, keepStaged);
    return;
  }
  const cover = join(dir, coverName(kind, 'cover'));
  const thumbnail = join(dir, coverName(kind, 'thumbnail'));
  // A folder made just now has no files anyone could be reading: write them in place, without a rename each.
  const created = await mkdir(dir, { recursive: true });
  const write = created === undefined ? writeAtomically : writeFile;
  await Promise.all([write(cover, images.cover), write(thumbnail, images.thumbnail)]);
}

/**
 * Staged images are only ever placed by a scan, a few metadata operations on the covers' own file system each: done
 * blocking, they cost less than the thread pool's round trips would. A new book's staging folder simply becomes its
 * cover folder.
 */
function placeStaged(dir: string, kind: CoverKind, images: StagedCoverImages, keepStaged: boolean): void {
  if (images.dir && kind === 'book' && !keepStaged) {
    try {
      renameSync(images.dir, dir);
      return;
    } catch (error) {
      // The book has a cover folder already: replace its files one by one.
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
    }
  }
  const created = mkdirSync(dir, { recursive: true });
  const targets: [string, string][] = [[images.coverPath, join(dir, coverName(kind, 'cover'))]];
  if (images.thumbnailPath !== undefined) targets.push([images.thumbnailPath, join(dir, coverName(kind, 'thumbnail'))]);
  for (const [from, to] of targets) {
    if (!keepStaged) renameSync(from, to);
    else if (created !== undefined) copyFileSync(from, to);
    else {
      const tmp = `${to}.${process.pid}.tmp`;
      copyFileSync(from, tmp);
      renameSync(tmp, to);
    }
  }
  // The thumbnail of the cover just replaced is stale: gone, it is made again from the new cover (thumbnail-backlog.ts).
  if (images.thumbnailPath === undefined && created === undefined) rmSync(join(dir, coverName(kind, 'thumbnail')), { force: true });
}

/** One book's images staged in a folder of their own, which a new book's cover folder simply becomes. */
export interface CoverStaging {
  /** Writes the cover and returns its path: hand it to `makeCoverImages`, which reads the thumbnail back from it. */
  sink(cover: Buffer): string;
  /** The first failure to write, if any: not a problem of the book, so the caller stops the scan with it. */
  failure(): unknown;
  /** Writes what is not written yet (the thumbnail when there is one, and the cover unless the sink did). */
  finish(images: CoverImages | Omit<CoverImages, 'thumbnail'>): StagedCoverImages;
}

/** A new folder of its own under `stagingDir` for one book's staged images, and its cover's path. */
function stagedPaths(stagingDir: string): { dir: string; coverPath: string } {
  const dir = join(stagingDir, randomUUID());
  return { dir, coverPath: join(dir, coverName('book', 'cover')) };
}

/**
 * Stages images in `stagingDir` (on the covers' file system) for `saveCoverImages` to move into place later. Meant
 * for workers that make the thumbnail at once (it is read back from the cover's file), so it blocks: until then the
 * book waits on the file anyway. A cover whose thumbnail is left for later is staged by `stageCover`.
 */
export function coverStaging(stagingDir: string): CoverStaging {
  const { dir, coverPath } = stagedPaths(stagingDir);
  const thumbnailPath = join(dir, coverName('book', 'thumbnail'));
  let dirMade = false;
  let written: Buffer | undefined;
  let failed: { error: unknown } | undefined;
  const write = (path: string, data: Buffer): void => {
    try {
      if (!dirMade) mkdirSync(dir);
      dirMade = true;
      writeFileSync(path, data);
    } catch (error) {
      failed ??= { error };
      throw error;
    }
  };
  return {
    sink: (cover) => {
      write(coverPath, cover);
      written = cover;
      return coverPath;
    },
    failure: () => failed?.error,
    finish: (images) => {
      if (written !== images.cover) write(coverPath, images.cover);
      if (!('thumbnail' in images)) return { dir, coverPath, width: images.width, height: images.height };
      write(thumbnailPath, images.thumbnail);
      return { dir, coverPath, thumbnailPath, width: images.width, height: images.height };
    },
  };
}

/**
 * Stages a cover whose thumbnail is left for later (a scan's; see thumbnail-backlog.ts). Its folder and file are made
 * through the thread pool, so a scan worker goes on reading the next books meanwhile: making a file is the dear part
 * (a new inode each, 0.3-1.5 ms of kernel time on an ext4 without a journal that has just deleted many files, see
 * docs/benchmarks.md), far more than the round trips cost.
 */
export async function stageCover(stagingDir: string, cover: Omit<CoverImages, 'thumbnail'>): Promise<StagedCoverImages> {
  const { dir, coverPath } = stagedPaths(stagingDir);
  await mkdir(dir);
  await writeFile(coverPath, cover.cover);
  return { dir, coverPath, width: cover.width, height: cover.height };
}

/** Stages images already made; see `coverStaging`. */
export function stageCoverImages(stagingDir: string, images: CoverImages): StagedCoverImages {
  return coverStaging(stagingDir).finish(images);
}

const STAGING_PREFIX = '.staging-';

const STAGING_NAME = new RegExp(`^\\.staging-(${WORK_MARK})-[0-9a-f]{8}$`);

/**
 * A fresh staging folder for one scan or import, named with this process's mark; staging folders of processes that
 * are gone (on whichever machine shares the covers folder) are removed.
 */
export async function createStagingDir(coversRoot: string, liveness: Liveness): Promise<string> {
  await mkdir(coversRoot, { recursive: true });
  const mark = await workMark(liveness);
  for (const name of await readdir(coversRoot)) {
    const match = STAGING_NAME.exec(name);
    if (match && (await markStatus(liveness, match[1] as string)) === 'gone') await rm(join(coversRoot, name), { recursive: true, force: true });
  }
  const dir = join(coversRoot, `${STAGING_PREFIX}${mark}-${randomUUID().slice(0, 8)}`);
  await mkdir(dir);
  return dir;
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

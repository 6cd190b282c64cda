// The filesystem operations a move needs, behind an interface so tests can inject failures (EXDEV, crashes).
import { createHash } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { join } from 'node:path';

/** What we know of a path without following symlinks. Device and inode are decimal strings (they may exceed 2^53). */
export interface PathInfo {
  dev: string;
  ino: string;
  size: number;
  mtimeMs: number;
  nlink: number;
  isDirectory: boolean;
  isFile: boolean;
  isSymbolicLink: boolean;
}

export interface MoveFs {
  /** Undefined when nothing is there. */
  lstat(path: string): Promise<PathInfo | undefined>;
  /** A hard link; fails with EEXIST when `to` exists (never replaces it). */
  link(from: string, to: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  /** Creates a folder and its parents. */
  mkdirp(path: string): Promise<void>;
  rmdir(path: string): Promise<void>;
  /** Removes a folder with everything in it. */
  rmTree(path: string): Promise<void>;
  readdir(path: string): Promise<string[]>;
  /** Copies a file to a path that must not exist, keeps its modification time, and flushes it to disk. */
  copyFile(from: string, to: string): Promise<void>;
  /** Copies a folder to a path that must not exist (recursively, same rules as copyFile). */
  copyTree(from: string, to: string): Promise<void>;
  /** Byte count and SHA-256 of a file, or of a folder's files with their relative names. */
  fingerprint(path: string): Promise<{ size: number; hash: string }>;
  /** Flushes a folder's entries to disk (best effort: not every platform can). */
  fsyncDir(path: string): Promise<void>;
}

export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

async function fsyncPath(path: string, flags: string): Promise<void> {
  const handle = await fsp.open(path, flags);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function hashFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function copyOneFile(from: string, to: string): Promise<void> {
  await fsp.copyFile(from, to, constants.COPYFILE_EXCL);
  const info = await fsp.stat(from);
  await fsp.utimes(to, info.atime, info.mtime);
  await fsyncPath(to, 'r+');
}

async function copyTreeInto(from: string, to: string): Promise<void> {
  await fsp.mkdir(to);
  for (const entry of await fsp.readdir(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) await copyTreeInto(source, target);
    else if (entry.isSymbolicLink()) await fsp.symlink(await fsp.readlink(source), target);
    else await copyOneFile(source, target);
  }
  const info = await fsp.stat(from);
  await fsp.utimes(to, info.atime, info.mtime);
  await nodeMoveFs.fsyncDir(to);
}

async function fileFingerprint(path: string, info: { size: number; isSymbolicLink(): boolean }): Promise<{ size: number; hash: string }> {
  return { size: info.size, hash: info.isSymbolicLink() ? `link:${await fsp.readlink(path)}` : await hashFile(path) };
}

async function fingerprintOf(path: string): Promise<{ size: number; hash: string }> {
  const info = await fsp.lstat(path);
  if (!info.isDirectory()) return fileFingerprint(path, info);
  const hash = createHash('sha256');
  let size = 0;
  const visit = async (dir: string, rel: string): Promise<void> => {
    for (const name of (await fsp.readdir(dir)).sort()) {
      const child = join(dir, name);
      const childRel = rel === '' ? name : `${rel}/${name}`;
      const childInfo = await fsp.lstat(child);
      if (childInfo.isDirectory()) {
        hash.update(`d:${childRel}\0`);
        await visit(child, childRel);
      } else {
        const part = await fileFingerprint(child, childInfo);
        size += part.size;
        hash.update(`f:${childRel}\0${part.size}\0${part.hash}\0`);
      }
    }
  };
  await visit(path, '');
  return { size, hash: hash.digest('hex') };
}

export const nodeMoveFs: MoveFs = {
  lstat: async (path) => {
    try {
      const s = await fsp.lstat(path, { bigint: true });
      return {
        dev: s.dev.toString(),
        ino: s.ino.toString(),
        size: Number(s.size),
        mtimeMs: Number(s.mtimeMs),
        nlink: Number(s.nlink),
        isDirectory: s.isDirectory(),
        isFile: s.isFile(),
        isSymbolicLink: s.isSymbolicLink(),
      };
    } catch (error) {
      if (errorCode(error) === 'ENOENT' || errorCode(error) === 'ENOTDIR') return undefined;
      throw error;
    }
  },
  link: (from, to) => fsp.link(from, to),
  rename: (from, to) => fsp.rename(from, to),
  unlink: (path) => fsp.unlink(path),
  mkdirp: async (path) => {
    await fsp.mkdir(path, { recursive: true });
  },
  rmdir: (path) => fsp.rmdir(path),
  rmTree: (path) => fsp.rm(path, { recursive: true, force: true }),
  readdir: (path) => fsp.readdir(path),
  copyFile: copyOneFile,
  copyTree: copyTreeInto,
  fingerprint: fingerprintOf,
  fsyncDir: async (path) => {
    try {
      await fsyncPath(path, 'r');
    } catch {
      // Directories cannot be opened for fsync on every platform; the data itself was synced.
    }
  },
};

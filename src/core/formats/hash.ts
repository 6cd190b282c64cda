// File fingerprints: KOReader's partial MD5 (device sync) and a full content hash (duplicates, move detection).
import { createHash, type Hash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { isMainThread } from 'node:worker_threads';

const SAMPLE_SIZE = 1024;
const CHUNK_SIZE = 1024 * 1024;
let blockingBuffer: Buffer | undefined;

/** Offsets KOReader samples: 0, then 1024 << 2i for i = 0..10 (1 KiB … 1 GiB). */
export const PARTIAL_MD5_OFFSETS: readonly number[] = [0, ...Array.from({ length: 11 }, (_, i) => 1024 * 4 ** i)];

/** KOReader's "fastDigest": MD5 over up to twelve 1 KiB samples; stops at the first offset past the end. */
export async function partialMd5(path: string): Promise<string> {
  const handle = await open(path, 'r');
  try {
    const md5 = createHash('md5');
    const buffer = Buffer.alloc(SAMPLE_SIZE);
    for (const offset of PARTIAL_MD5_OFFSETS) {
      const { bytesRead } = await handle.read(buffer, 0, SAMPLE_SIZE, offset);
      if (bytesRead === 0) break;
      md5.update(buffer.subarray(0, bytesRead));
      if (bytesRead < SAMPLE_SIZE) break;
    }
    return md5.digest('hex');
  } finally {
    await handle.close();
  }
}

/** Grimmory's document hash for a folder audiobook: MD5 of the first track's partial MD5 followed by the track count. */
export function folderPartialMd5(firstTrackHash: string, trackCount: number): string {
  return createHash('md5').update(firstTrackHash + String(trackCount)).digest('hex');
}

/** Feeds one read (`bytes`, found at `position`) to the hashes; returns the index of the next sample still to take. */
function feed(bytes: Buffer, position: number, sha: Hash, md5: Hash | undefined, sample: number): number {
  const end = position + bytes.length;
  sha.update(bytes);
  // A sample can straddle two reads: take its part in this one and come back for the rest.
  while (md5 && sample < PARTIAL_MD5_OFFSETS.length) {
    const start = PARTIAL_MD5_OFFSETS[sample] as number;
    if (start >= end) break;
    const sampleEnd = start + SAMPLE_SIZE;
    md5.update(bytes.subarray(Math.max(start, position) - position, Math.min(sampleEnd, end) - position));
    if (sampleEnd > end) break;
    sample++;
  }
  return sample;
}

/**
 * Reads the file once, front to back, into a SHA-256 and, when `md5` is given, KOReader's samples. One buffer per
 * file at most: a fresh 1 MiB buffer per read (what a read stream does) is external memory V8 answers with a full
 * garbage collection every few files. A file of one buffer or less (most books) is read with blocking calls into a
 * buffer the thread keeps: five trips through the thread pool cost several times more CPU than the read itself.
 */
async function hashFile(path: string, sha: Hash, md5?: Hash): Promise<void> {
  const fd = openSync(path, 'r');
  try {
    const { size } = fstatSync(fd);
    if (size < CHUNK_SIZE || !isMainThread) {
      // Nothing else runs until the last byte is hashed, so one buffer per thread serves every file read this way: a
      // fresh one each time is external memory that brings V8's next full collection closer. A worker thread (a
      // scan's) reads every file so, comics and audiobook tracks too: the others' continuations wait a read from the
      // page cache at most, while the asynchronous reads' buffer per file cost a CBZ 1.5-3 ms of CPU, mostly collecting it.
      blockingBuffer ??= Buffer.allocUnsafe(CHUNK_SIZE);
      const buffer = blockingBuffer.subarray(0, Math.max(size + 1, SAMPLE_SIZE));
      let position = 0;
      let sample = 0;
      for (let read = readSync(fd, buffer, 0, buffer.length, 0); read > 0; read = readSync(fd, buffer, 0, buffer.length, position)) {
        sample = feed(buffer.subarray(0, read), position, sha, md5, sample);
        position += read;
      }
      return;
    }
  } finally {
    closeSync(fd);
  }
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(CHUNK_SIZE);
    let position = 0;
    let sample = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
      if (bytesRead === 0) break;
      sample = feed(buffer.subarray(0, bytesRead), position, sha, md5, sample);
      position += bytesRead;
    }
  } finally {
    await handle.close();
  }
}

/** SHA-256 of the whole file. */
export async function contentHash(path: string): Promise<string> {
  const sha = createHash('sha256');
  await hashFile(path, sha);
  return sha.digest('hex');
}

/** `partialMd5` and `contentHash` of one file, reading it once. */
export async function fileFingerprints(path: string): Promise<{ partialMd5: string; contentHash: string }> {
  const sha = createHash('sha256');
  const md5 = createHash('md5');
  await hashFile(path, sha, md5);
  return { partialMd5: md5.digest('hex'), contentHash: sha.digest('hex') };
}

/** Content hash of a folder of tracks: SHA-256 over each track's name, size and own content hash, in order. */
export function combinedContentHash(parts: { name: string; hash: string }[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(`${part.name}\0${part.hash}\n`);
  return hash.digest('hex');
}

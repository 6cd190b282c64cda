// The per-file work of a scan, run in worker threads: fingerprint, extract, and prepare cover images.
import { statSync } from 'node:fs';
import { basename } from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { makeCover, makeCoverImages, type CoverCropping, type CoverImages } from '../covers/cover-images.ts';
import { coverStaging, stageCover, type CoverSink, type StagedCoverImages } from '../covers/cover-store.ts';
import { asFormatError } from '../formats/errors.ts';
import { contentHash, combinedContentHash, fileFingerprints, folderPartialMd5 } from '../formats/hash.ts';
import { folderAudiobookFormat, formatOf } from '../formats/index.ts';
import type { Extraction } from '../formats/types.ts';

export interface ParseTask {
  absolutePath: string;
  /** Set for a folder audiobook. */
  tracks?: string[];
  /** Content hashes of missing files of the same size: a match means the file moved, so extraction is skipped. */
  movedCandidates?: string[];
  /** Only fingerprint and extract; do not decode the cover (the cover is locked). */
  skipCover?: boolean;
  cropping: CoverCropping;
  /** Settle and stage the cover only; its thumbnail is made later (see src/core/covers/thumbnail-backlog.ts). */
  deferThumbnail?: boolean;
  /** Where to write the cover images (the result then names the files instead of carrying the bytes). */
  stagingDir: string;
}

export type ParseResult =
  | { kind: 'moved'; partialMd5: string; contentHash: string }
  | { kind: 'parsed'; partialMd5: string; contentHash: string; extraction: Omit<Extraction, 'cover'>; cover?: StagedCoverImages; coverError?: string }
  | { kind: 'failed'; code: string; reason: string };

async function fingerprint(task: ParseTask): Promise<{ partialMd5: string; contentHash: string }> {
  if (!task.tracks) return fileFingerprints(task.absolutePath);
  const parts: { name: string; hash: string }[] = [];
  let firstPartial = '';
  for (const [i, track] of task.tracks.entries()) {
    const info = statSync(track);
    let hash: string;
    if (i === 0) ({ partialMd5: firstPartial, contentHash: hash } = await fileFingerprints(track));
    else hash = await contentHash(track);
    parts.push({ name: `${basename(track)}:${info.size}`, hash });
  }
  return { partialMd5: folderPartialMd5(firstPartial, task.tracks.length), contentHash: combinedContentHash(parts) };
}

type Parsed = Exclude<ParseResult, { kind: 'parsed' }> | (Omit<Extract<ParseResult, { kind: 'parsed' }>, 'cover'> & { images?: CoverImages | Omit<CoverImages, 'thumbnail'> });

async function parseFile(task: ParseTask, sink: CoverSink): Promise<Parsed> {
  try {
    const format = task.tracks ? folderAudiobookFormat : formatOf(basename(task.absolutePath));
    if (!format) return { kind: 'failed', code: 'UNSUPPORTED', reason: 'not a book format' };
    if (!task.tracks) {
      // Blocking, like the hashing: on a worker thread, a round trip through the thread pool is the costlier part.
      const info = statSync(task.absolutePath);
      if (info.size === 0) return { kind: 'failed', code: 'EMPTY', reason: 'the file is empty (0 bytes)' };
    }
    const prints = await fingerprint(task);
    if (task.movedCandidates?.includes(prints.contentHash)) return { kind: 'moved', ...prints };

    const { cover: rawCover, ...extraction } = await format.extract(task.absolutePath, { skipCover: task.skipCover ?? false, blocking: !isMainThread });
    if (!rawCover) return { kind: 'parsed', ...prints, extraction };
    try {
      const kind = extraction.bookType === 'AUDIOBOOK' ? 'audiobook' : 'book';
      const images = task.deferThumbnail ? await makeCover(rawCover.data, kind, task.cropping) : await makeCoverImages(rawCover.data, kind, task.cropping, sink);
      return { kind: 'parsed', ...prints, extraction, images };
    } catch (error) {
      return { kind: 'parsed', ...prints, extraction, coverError: asFormatError(error).message };
    }
  } catch (error) {
    const failure = asFormatError(error);
    return { kind: 'failed', code: failure.code, reason: failure.message };
  }
}

export async function parseTask(task: ParseTask): Promise<ParseResult> {
  // The cover is written to the staging folder as soon as it is settled, and the thumbnail made from that file.
  const staging = coverStaging(task.stagingDir);
  const parsed = await parseFile(task, staging.sink);
  // Not a problem of the book: a staging folder that cannot be written stops the scan, as a full disk always did.
  const failure = staging.failure();
  if (failure !== undefined) throw failure;
  if (parsed.kind !== 'parsed' || !parsed.images) return parsed;
  const { images, ...rest } = parsed;
  return { ...rest, cover: 'thumbnail' in images ? staging.finish(images) : await stageCover(task.stagingDir, images) };
}

// Reads one audio file's tags and stream properties with music-metadata, turning every failure into a FormatError.
import { statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import type * as MusicMetadataModule from 'music-metadata';
import type { IAudioMetadata } from 'music-metadata';
import { BlockingFileTokenizer } from './blocking-tokenizer.ts';
import { FormatError, asFormatError } from './errors.ts';

type MusicMetadata = typeof MusicMetadataModule;

let loading: Promise<MusicMetadata> | undefined;

/** Loaded on the first audiobook so that scanning a library without any does not pay for it. */
function loadMusicMetadata(): Promise<MusicMetadata> {
  loading ??= import('music-metadata').catch((error: unknown) => {
    loading = undefined;
    throw new FormatError('IO', `music-metadata could not be loaded: ${error instanceof Error ? error.message : String(error)}`);
  });
  return loading;
}

export interface ParseOptions {
  skipCovers?: boolean;
  /** Read with blocking calls (scan worker threads; see `ExtractOptions.blocking`). */
  blocking?: boolean;
}

/**
 * Tags, stream properties and chapters of one track. The duration is computed even when the header does not state
 * it, which for an MP3 without a Xing/VBRI header means reading the frames through (streamed, never held in memory).
 */
export async function parseAudioFile(path: string, options: ParseOptions = {}): Promise<IAudioMetadata> {
  try {
    const info = options.blocking ? statSync(path) : await stat(path);
    if (!info.isFile()) throw new FormatError('IO', 'not a regular file');
    if (info.size === 0) throw new FormatError('EMPTY', 'the audio file is empty');
    const musicMetadata = await loadMusicMetadata();
    const parseOptions = { duration: true, includeChapters: true, skipCovers: options.skipCovers ?? false };
    const parsed = options.blocking ? await parseBlocking(musicMetadata, path, parseOptions) : await musicMetadata.parseFile(path, parseOptions);
    const { format } = parsed;
    // music-metadata is lenient: garbage with an .mp3 name "parses" to a format with nothing in it.
    if (format.hasAudio === false || (!format.codec && !format.duration)) {
      throw new FormatError('CORRUPT', 'no audio stream found');
    }
    return parsed;
  } catch (error) {
    if (error instanceof FormatError) throw error;
    const reason = asFormatError(error, 'CORRUPT');
    if (reason.code !== 'CORRUPT') throw reason;
    throw new FormatError('CORRUPT', `not a readable audio file: ${reason.message}`, { cause: error });
  }
}

async function parseBlocking(musicMetadata: MusicMetadata, path: string, options: MusicMetadataModule.IOptions): Promise<IAudioMetadata> {
  const tokenizer = new BlockingFileTokenizer(path);
  try {
    return await musicMetadata.parseFromTokenizer(tokenizer, options);
  } finally {
    await tokenizer.close();
  }
}

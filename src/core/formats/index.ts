// Which files are books, and which extractor reads each.
import { extname } from 'node:path';
import { AUDIO_TRACK_EXTENSIONS } from './audio-extensions.ts';
import type { BookFileType, Extractor } from './types.ts';

/**
 * Extractor modules load on first use: a library of EPUBs never pays for pdf.js, music-metadata or unrar, in the
 * main process or in any scan worker.
 */
function lazy(load: () => Promise<Extractor>): Extractor {
  let extractor: Promise<Extractor> | undefined;
  return async (path, options) => (await (extractor ??= load()))(path, options);
}

const extractEpub = lazy(async () => (await import('./epub.ts')).extractEpub);
const extractPdf = lazy(async () => (await import('./pdf.ts')).extractPdf);
const extractComic = lazy(async () => (await import('./comic.ts')).extractComic);
const extractMobi = lazy(async () => (await import('./mobi.ts')).extractMobi);
const extractFb2 = lazy(async () => (await import('./fb2.ts')).extractFb2);
const extractAudioFile = lazy(async () => (await import('./audio.ts')).extractAudioFile);
const extractAudioFolder = lazy(async () => (await import('./audio.ts')).extractAudioFolder);

export interface BookFormat {
  /** File extension as the interface records it (`epub`, `cbz`, `fb2`, `m4b`…). */
  extension: string;
  bookType: BookFileType;
  extract: Extractor;
}

const FORMATS: Record<string, BookFormat> = Object.fromEntries(
  (
    [
      ['epub', 'EPUB', extractEpub],
      ['pdf', 'PDF', extractPdf],
      ['cbz', 'CBX', extractComic],
      ['cbr', 'CBX', extractComic],
      ['cb7', 'CBX', extractComic],
      ['mobi', 'MOBI', extractMobi],
      ['azw3', 'AZW3', extractMobi],
      ['azw', 'AZW3', extractMobi],
      ['fb2', 'FB2', extractFb2],
      ['m4b', 'AUDIOBOOK', extractAudioFile],
      ['m4a', 'AUDIOBOOK', extractAudioFile],
      ['mp3', 'AUDIOBOOK', extractAudioFile],
      ['opus', 'AUDIOBOOK', extractAudioFile],
    ] as const
  ).map(([extension, bookType, extract]) => [extension, { extension, bookType, extract }]),
);

export const AUDIO_EXTENSIONS: ReadonlySet<string> = AUDIO_TRACK_EXTENSIONS;

/** The extension a file is known by: `fb2.zip` counts as `fb2`; anything else is its last suffix, lower case. */
export function bookExtension(fileName: string): string {
  const lower = fileName.toLowerCase();
  if (lower.endsWith('.fb2.zip')) return 'fb2';
  return extname(lower).slice(1);
}

/** The format of a file by its name, or undefined when it is not a book. */
export function formatOf(fileName: string): BookFormat | undefined {
  if (fileName.startsWith('.')) return undefined;
  return FORMATS[bookExtension(fileName)];
}

export const folderAudiobookFormat: BookFormat = { extension: 'folder', bookType: 'AUDIOBOOK', extract: extractAudioFolder };

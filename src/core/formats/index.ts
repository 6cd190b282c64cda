// Which files are books, and which extractor reads each.
import { extname } from 'node:path';
import { AUDIO_TRACK_EXTENSIONS, extractAudioFile, extractAudioFolder } from './audio.ts';
import { extractComic } from './comic.ts';
import { extractEpub } from './epub.ts';
import { extractFb2 } from './fb2.ts';
import { extractMobi } from './mobi.ts';
import { extractPdf } from './pdf.ts';
import type { BookFileType, Extractor } from './types.ts';

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

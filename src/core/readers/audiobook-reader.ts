// What the web audiobook player asks of a book: stream properties, chapters and, for a folder of tracks, the tracks
// with their place on the book's timeline.
import { stat } from 'node:fs/promises';
import { basename, parse } from 'node:path';
import type { LocatedFile } from '../books/file-locations.ts';
import { listAudioTracks } from '../formats/audio.ts';
import type { AudioChapter } from '../formats/types.ts';
import type { Db } from '../store/store.ts';

export interface AudiobookTrack {
  index: number;
  fileName: string;
  title: string;
  durationMs: number | null;
  fileSizeBytes: number;
  cumulativeStartMs: number | null;
}

export interface AudiobookInfo {
  bookId: number;
  bookFileId: number;
  title: string | null;
  author: string | null;
  narrator: string | null;
  durationMs: number | null;
  bitrate: number | null;
  codec: string | null;
  sampleRate: number | null;
  channels: number | null;
  totalSizeBytes: number | null;
  folderBased: boolean;
  chapters: AudioChapter[] | null;
  tracks: AudiobookTrack[] | null;
}

export function parseChapters(json: string | null): AudioChapter[] {
  if (!json) return [];
  try {
    const parsed = JSON.parse(json) as unknown;
    return Array.isArray(parsed) ? (parsed as AudioChapter[]) : [];
  } catch {
    return [];
  }
}

/** The tracks of a folder audiobook in playing order; the scan stored one chapter per track, which gives the times. */
export async function audiobookTracks(folder: string, chapters: readonly AudioChapter[]): Promise<(AudiobookTrack & { path: string })[]> {
  const paths = await listAudioTracks(folder);
  return Promise.all(
    paths.map(async (path, index) => {
      const chapter = chapters.length === paths.length ? chapters[index] : undefined;
      const size = await stat(path).then((info) => info.size, () => 0);
      return { index, path, fileName: basename(path), title: chapter?.title ?? parse(path).name, durationMs: chapter?.durationMs ?? null, fileSizeBytes: size, cumulativeStartMs: chapter?.startTimeMs ?? null };
    }),
  );
}

export async function audiobookInfo(db: Db, file: LocatedFile & { path: string }): Promise<AudiobookInfo> {
  const row = await db
    .selectFrom('book_file')
    .leftJoin('book_metadata', 'book_metadata.book_id', 'book_file.book_id')
    .select(['book_file.duration_seconds', 'book_file.bitrate', 'book_file.codec', 'book_file.sample_rate', 'book_file.channels', 'book_file.chapters_json', 'book_file.size_bytes', 'book_metadata.title', 'book_metadata.narrator'])
    .where('book_file.id', '=', file.id)
    .executeTakeFirstOrThrow();
  const author = await db
    .selectFrom('book_metadata_author_mapping')
    .innerJoin('author', 'author.id', 'book_metadata_author_mapping.author_id')
    .select('author.name')
    .where('book_metadata_author_mapping.book_id', '=', file.bookId)
    .orderBy('book_metadata_author_mapping.sort_order')
    .executeTakeFirst();
  const chapters = parseChapters(row.chapters_json);
  const tracks = file.folderBased ? (await audiobookTracks(file.path, chapters)).map(({ path: _path, ...track }) => track) : null;
  const totalSizeBytes = tracks ? tracks.reduce((sum, t) => sum + t.fileSizeBytes, 0) : (row.size_bytes ?? (await stat(file.path).then((i) => i.size, () => null)));
  return {
    bookId: file.bookId,
    bookFileId: file.id,
    title: row.title,
    author: author?.name ?? null,
    narrator: row.narrator,
    durationMs: row.duration_seconds === null ? null : row.duration_seconds * 1000,
    bitrate: row.bitrate,
    codec: row.codec,
    sampleRate: row.sample_rate,
    channels: row.channels,
    totalSizeBytes,
    folderBased: file.folderBased,
    chapters: chapters.length > 0 ? chapters : null,
    tracks,
  };
}

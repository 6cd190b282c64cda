// What the catalog stores about one book file (or folder of audio tracks) after reading it.
import type { Insertable } from 'kysely';
import type { Extraction } from '../formats/types.ts';
import type { BookFileTable } from '../store/db-types.ts';

export interface FileLocation {
  libraryPathId: number;
  /** Folder below the library root, `/`-separated, '' at the root. */
  subPath: string;
  fileName: string;
}

export interface FileFingerprint {
  sizeBytes: number;
  mtimeMs: number;
  /** KOReader partial MD5 (for folders: the folder digest). */
  partialMd5: string;
  /** SHA-256 of the content (for folders: over the tracks). */
  contentHash: string;
}

export interface FileRecord extends FileLocation, FileFingerprint {
  folderBased: boolean;
  extraction: Extraction;
}

export type FileRowValues = Omit<Insertable<BookFileTable>, 'id' | 'book_id'>;

export function fileRowValues(record: FileRecord): FileRowValues {
  const { extraction: x } = record;
  const audio = x.audio;
  return {
    library_path_id: record.libraryPathId,
    file_sub_path: record.subPath,
    file_name: record.fileName,
    size_bytes: record.sizeBytes,
    file_size_kb: Math.round(record.sizeBytes / 1024),
    mtime_ms: Math.trunc(record.mtimeMs),
    current_hash: record.partialMd5,
    content_hash: record.contentHash,
    is_book: 1,
    book_type: x.bookType,
    archive_type: x.archiveType ?? null,
    is_folder_based: record.folderBased ? 1 : 0,
    is_fixed_layout: x.fixedLayout ? 1 : 0,
    page_count: x.metadata.pageCount ?? null,
    duration_seconds: audio?.durationSeconds ?? null,
    bitrate: audio?.bitrate ?? null,
    sample_rate: audio?.sampleRate ?? null,
    channels: audio?.channels ?? null,
    codec: audio?.codec ?? null,
    chapter_count: audio ? audio.chapters.length : null,
    chapters_json: audio && audio.chapters.length > 0 ? JSON.stringify(audio.chapters) : null,
    missing_at: null,
  };
}

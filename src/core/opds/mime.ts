// The media type an OPDS acquisition link announces, and the download then sends, for each kind of book file.
// Readers choose the app or the file extension to save as from it, so it follows what readers know rather than
// a generic byte stream.

export interface AcquiredFile {
  book_type: string | null;
  archive_type: string | null;
  file_name: string;
  is_folder_based: number;
}

const COMIC_BY_ARCHIVE: Record<string, string> = {
  ZIP: 'application/vnd.comicbook+zip',
  RAR: 'application/x-cbr',
  SEVEN_ZIP: 'application/x-cb7',
};

const COMIC_BY_EXTENSION: Record<string, string> = {
  cbz: 'application/vnd.comicbook+zip',
  cbr: 'application/x-cbr',
  cb7: 'application/x-cb7',
  cbt: 'application/x-cbt',
};

const AUDIO_BY_EXTENSION: Record<string, string> = {
  mp3: 'audio/mpeg',
  m4b: 'audio/mp4',
  m4a: 'audio/mp4',
  mp4: 'audio/mp4',
  aac: 'audio/aac',
  opus: 'audio/opus',
  ogg: 'audio/ogg',
  oga: 'audio/ogg',
  flac: 'audio/flac',
  wav: 'audio/wav',
};

function extension(fileName: string): string {
  const dot = fileName.lastIndexOf('.');
  return dot > 0 ? fileName.slice(dot + 1).toLowerCase() : '';
}

export const OCTET_STREAM = 'application/octet-stream';

export function acquisitionType(file: AcquiredFile): string {
  // A folder audiobook is downloaded as one ZIP of its tracks.
  if (file.is_folder_based === 1) return 'application/zip';
  const ext = extension(file.file_name);
  switch (file.book_type) {
    case 'EPUB':
      return 'application/epub+zip';
    case 'PDF':
      return 'application/pdf';
    case 'MOBI':
      return 'application/x-mobipocket-ebook';
    case 'AZW3':
      return 'application/vnd.amazon.ebook';
    case 'FB2':
      // `book.fb2.zip`: readers that open zipped FictionBook look for a ZIP.
      return ext === 'zip' ? 'application/zip' : 'application/x-fictionbook+xml';
    case 'CBX':
      // The container as the scanner read it from the magic bytes; the extension when it is unknown.
      return COMIC_BY_ARCHIVE[file.archive_type ?? ''] ?? COMIC_BY_EXTENSION[ext] ?? 'application/vnd.comicbook+zip';
    case 'AUDIOBOOK':
      return AUDIO_BY_EXTENSION[ext] ?? 'audio/mp4';
    default:
      return OCTET_STREAM;
  }
}

/** The readable format name a reader shows beside each download (Grimmory's book type names). */
export function formatTitle(file: Pick<AcquiredFile, 'book_type'>): string | undefined {
  return file.book_type ?? undefined;
}

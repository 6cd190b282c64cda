// MOBI and AZW3/KF8: metadata from record 0's EXTH block and the cover image record, read at offsets only.
import { open } from 'node:fs/promises';
import { extname } from 'node:path';
import { imageMime } from './epub-image.ts';
import { asFormatError, FormatError } from './errors.ts';
import { LIMITS } from './limits.ts';
import { parseRecordZero, type MobiHeader } from './mobi-header.ts';
import { EXTH, exthNumber, readMobiMetadata } from './mobi-metadata.ts';
import { openPalmDatabase, type PalmDatabase } from './mobi-palmdb.ts';
import type { BookFileType, ExtractedCover, ExtractOptions, Extraction } from './types.ts';

/** Record 0 holds headers and metadata only; anything near this size is not a real book. */
const MAX_RECORD_ZERO_BYTES = LIMITS.maxXmlBytes;
/** EXTH "no such record" marker for cover and thumbnail offsets. */
const NO_OFFSET = 0xffffffff;

function bookTypeOf(path: string): BookFileType {
  const extension = extname(path).toLowerCase();
  return extension === '.azw3' || extension === '.azw' ? 'AZW3' : 'MOBI';
}

/** Cover record, then thumbnail, then the first image: the first that starts like a JPEG, PNG or GIF. */
async function readCover(db: PalmDatabase, header: MobiHeader): Promise<ExtractedCover | undefined> {
  if (header.firstImageIndex === undefined) return undefined;
  const firstImage = header.firstImageIndex;
  const offsets = [exthNumber(header, EXTH.coverOffset), exthNumber(header, EXTH.thumbnailOffset), 0];
  const tried = new Set<number>();
  for (const offset of offsets) {
    if (offset === undefined || offset === NO_OFFSET) continue;
    const index = firstImage + offset;
    if (tried.has(index) || index >= db.recordCount) continue;
    tried.add(index);
    try {
      const data = await db.readRecord(index, LIMITS.maxEntryBytes);
      const mime = imageMime(data);
      if (mime && mime !== 'image/webp') return { data, mime };
    } catch {
      // An oversized image record is skipped like a missing one.
    }
  }
  return undefined;
}

export async function extractMobi(path: string, options: ExtractOptions = {}): Promise<Extraction> {
  try {
    const handle = await open(path, 'r');
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw new FormatError('IO', `${path} is not a regular file`);
      if (info.size === 0) throw new FormatError('EMPTY', 'MOBI file is empty (0 bytes)');

      const db = await openPalmDatabase(handle, info.size);
      const header = parseRecordZero(await db.readRecord(0, MAX_RECORD_ZERO_BYTES));
      const { metadata, fixedLayout } = readMobiMetadata(header, db.name);
      for (const key of Object.keys(metadata) as (keyof typeof metadata)[]) if (metadata[key] === undefined) delete metadata[key];

      const extraction: Extraction = { bookType: bookTypeOf(path), fixedLayout, metadata };
      if (!options.skipCover) {
        const cover = await readCover(db, header);
        if (cover) extraction.cover = cover;
      }
      return extraction;
    } finally {
      await handle.close();
    }
  } catch (error) {
    throw asFormatError(error);
  }
}

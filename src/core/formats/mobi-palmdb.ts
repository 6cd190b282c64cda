// The Palm database container of MOBI/AZW3: header, record table, and bounded reads of single records.
import type { FileHandle } from 'node:fs/promises';
import { FormatError } from './errors.ts';

const HEADER_BYTES = 78;
const RECORD_ENTRY_BYTES = 8;
const NAME_BYTES = 32;

/** Database type + creator codes of the e-book flavours we read. */
const KNOWN_KINDS = new Set(['BOOKMOBI', 'TEXtREAd']);

export interface PalmDatabase {
  /** Database name from the header (NUL-terminated, at most 31 characters). */
  name: string;
  /** Type + creator, e.g. `BOOKMOBI`. */
  kind: string;
  recordCount: number;
  fileSize: number;
  /** Reads record `index` whole; refuses records larger than `maxBytes`. */
  readRecord(index: number, maxBytes: number): Promise<Buffer>;
  recordLength(index: number): number;
}

async function readExactly(handle: FileHandle, position: number, length: number, what: string): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, position + filled);
    if (bytesRead === 0) throw new FormatError('CORRUPT', `file ends inside the ${what} (truncated)`);
    filled += bytesRead;
  }
  return buffer;
}

/** Reads the header and record table of an open file, checking every record offset against the file size. */
export async function openPalmDatabase(handle: FileHandle, fileSize: number): Promise<PalmDatabase> {
  if (fileSize < HEADER_BYTES) throw new FormatError('CORRUPT', `file is ${fileSize} bytes, too short for a Palm database header`);
  const header = await readExactly(handle, 0, HEADER_BYTES, 'Palm database header');
  const kind = header.toString('latin1', 60, 68);
  if (!KNOWN_KINDS.has(kind)) throw new FormatError('CORRUPT', `not a MOBI book (database type "${kind.replace(/[^\x20-\x7e]/g, '?')}")`);
  const nameEnd = header.indexOf(0);
  const name = header.toString('latin1', 0, nameEnd === -1 || nameEnd > NAME_BYTES ? NAME_BYTES : nameEnd);
  const recordCount = header.readUInt16BE(76);
  if (recordCount === 0) throw new FormatError('CORRUPT', 'Palm database has no records');

  const tableEnd = HEADER_BYTES + recordCount * RECORD_ENTRY_BYTES;
  if (tableEnd > fileSize) throw new FormatError('CORRUPT', `record table of ${recordCount} records runs past the end of the file`);
  const table = await readExactly(handle, HEADER_BYTES, recordCount * RECORD_ENTRY_BYTES, 'record table');
  const offsets: number[] = [];
  for (let i = 0; i < recordCount; i++) {
    const offset = table.readUInt32BE(i * RECORD_ENTRY_BYTES);
    const previous = offsets[i - 1] ?? tableEnd;
    if (offset < previous || offset > fileSize) {
      throw new FormatError('CORRUPT', `record ${i} offset ${offset} is outside the file (size ${fileSize}) or out of order`);
    }
    offsets.push(offset);
  }

  const recordLength = (index: number): number => {
    const start = offsets[index];
    if (start === undefined) throw new FormatError('CORRUPT', `record ${index} does not exist (${recordCount} records)`);
    return (offsets[index + 1] ?? fileSize) - start;
  };

  return {
    name,
    kind,
    recordCount,
    fileSize,
    recordLength,
    async readRecord(index, maxBytes) {
      const length = recordLength(index);
      if (length > maxBytes) throw new FormatError('TOO_LARGE', `record ${index} is ${length} bytes (limit ${maxBytes})`);
      return readExactly(handle, offsets[index] ?? 0, length, `record ${index}`);
    },
  };
}

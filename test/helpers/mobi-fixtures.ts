// A small MOBI/AZW3 writer for the extractor tests: Palm database, record 0 (PalmDOC + MOBI + EXTH headers),
// one uncompressed text record, image records and an end-of-file record.
import fs from 'node:fs';

export type ExthValue = string | Buffer | number;

export interface MobiSpec {
  /** Palm database name (at most 31 bytes). */
  databaseName?: string;
  /** MOBI full name; omitted from the header when undefined. */
  fullName?: string;
  /** 65001 (UTF-8, default) or 1252 (strings are then written in windows-1252). */
  encoding?: 65001 | 1252;
  /** 6 classic MOBI (default), 8 KF8/AZW3. */
  version?: 6 | 8;
  /** Windows LCID, e.g. 0x0409 English (US). */
  locale?: number;
  /** PalmDOC encryption type; non-zero marks a DRM'd book. */
  encryption?: number;
  /** EXTH records in order; numbers are written as 4-byte big-endian values. */
  exth?: Array<[number, ExthValue]>;
  text?: string;
  images?: Buffer[];
}

export const PALM_HEADER_BYTES = 78;
export const RECORD_ENTRY_BYTES = 8;
const EOF_RECORD = Buffer.from([0xe9, 0x8e, 0x0d, 0x0a]);

function encode(text: string, encoding: 65001 | 1252): Buffer {
  if (encoding === 65001) return Buffer.from(text, 'utf8');
  // windows-1252 matches latin1 for the characters the tests use (é, è, ü…).
  return Buffer.from(text, 'latin1');
}

function padTo4(buffer: Buffer): Buffer {
  const pad = (4 - (buffer.length % 4)) % 4;
  return pad === 0 ? buffer : Buffer.concat([buffer, Buffer.alloc(pad)]);
}

function exthBlock(records: Array<[number, ExthValue]>, encoding: 65001 | 1252): Buffer {
  const parts = records.map(([type, value]) => {
    const data = typeof value === 'number' ? Buffer.alloc(4) : Buffer.isBuffer(value) ? value : encode(value, encoding);
    if (typeof value === 'number') data.writeUInt32BE(value >>> 0, 0);
    const head = Buffer.alloc(8);
    head.writeUInt32BE(type, 0);
    head.writeUInt32BE(8 + data.length, 4);
    return Buffer.concat([head, data]);
  });
  const body = Buffer.concat(parts);
  const head = Buffer.alloc(12);
  head.write('EXTH', 0, 'latin1');
  head.writeUInt32BE(12 + body.length, 4);
  head.writeUInt32BE(records.length, 8);
  return padTo4(Buffer.concat([head, body]));
}

function recordZero(spec: MobiSpec, textLength: number, firstImageIndex: number, recordCount: number): Buffer {
  const encoding = spec.encoding ?? 65001;
  const version = spec.version ?? 6;
  const mobiHeaderLength = version === 8 ? 264 : 232;
  const exth = spec.exth && spec.exth.length > 0 ? exthBlock(spec.exth, encoding) : Buffer.alloc(0);
  const fullName = spec.fullName === undefined ? Buffer.alloc(0) : encode(spec.fullName, encoding);

  const palmDoc = Buffer.alloc(16);
  palmDoc.writeUInt16BE(1, 0); // no compression
  palmDoc.writeUInt32BE(textLength, 4);
  palmDoc.writeUInt16BE(1, 8); // one text record
  palmDoc.writeUInt16BE(4096, 10);
  palmDoc.writeUInt16BE(spec.encryption ?? 0, 12);

  const mobi = Buffer.alloc(mobiHeaderLength);
  const at = (offsetInRecord: number) => offsetInRecord - 16;
  mobi.write('MOBI', 0, 'latin1');
  mobi.writeUInt32BE(mobiHeaderLength, at(20));
  mobi.writeUInt32BE(2, at(24)); // Mobipocket book
  mobi.writeUInt32BE(encoding, at(28));
  mobi.writeUInt32BE(0x12345678, at(32));
  mobi.writeUInt32BE(version, at(36));
  for (let offset = 40; offset < 80; offset += 4) mobi.writeUInt32BE(0xffffffff, at(offset)); // unused indexes
  mobi.writeUInt32BE(firstImageIndex === 0xffffffff ? recordCount - 1 : firstImageIndex, at(80));
  const fullNameOffset = 16 + mobiHeaderLength + exth.length;
  mobi.writeUInt32BE(spec.fullName === undefined ? 0 : fullNameOffset, at(84));
  mobi.writeUInt32BE(fullName.length, at(88));
  mobi.writeUInt32BE(spec.locale ?? 0, at(92));
  mobi.writeUInt32BE(version, at(104));
  mobi.writeUInt32BE(firstImageIndex, at(108));
  mobi.writeUInt32BE(exth.length > 0 ? 0x50 : 0, at(128));

  return padTo4(Buffer.concat([palmDoc, mobi, exth, fullName, Buffer.alloc(2)]));
}

export function mobiBook(spec: MobiSpec): Buffer {
  const text = Buffer.from(spec.text ?? '<html><body><p>Chapter one. It was a dark and stormy night.</p></body></html>', 'utf8');
  const images = spec.images ?? [];
  const recordCount = 2 + images.length + 1;
  const firstImageIndex = images.length > 0 ? 2 : 0xffffffff;
  const records = [recordZero(spec, text.length, firstImageIndex, recordCount), text, ...images, EOF_RECORD];

  const header = Buffer.alloc(PALM_HEADER_BYTES);
  const name = Buffer.from((spec.databaseName ?? 'Test_Book').slice(0, 31), 'latin1');
  name.copy(header, 0);
  const now = Math.floor(Date.UTC(2024, 0, 1) / 1000) + 2082844800; // seconds since 1904
  header.writeUInt32BE(now >>> 0, 36);
  header.writeUInt32BE(now >>> 0, 40);
  header.write('BOOKMOBI', 60, 'latin1');
  header.writeUInt32BE(recordCount * 2 - 1, 68);
  header.writeUInt16BE(recordCount, 76);

  const table = Buffer.alloc(recordCount * RECORD_ENTRY_BYTES);
  let offset = PALM_HEADER_BYTES + table.length + 2; // two bytes of gap, as real files have
  records.forEach((record, i) => {
    table.writeUInt32BE(offset, i * RECORD_ENTRY_BYTES);
    table.writeUInt32BE((i * 2) & 0xffffff, i * RECORD_ENTRY_BYTES + 4);
    offset += record.length;
  });
  return Buffer.concat([header, table, Buffer.alloc(2), ...records]);
}

export function writeMobi(file: string, spec: MobiSpec): Buffer {
  const bytes = mobiBook(spec);
  fs.writeFileSync(file, bytes);
  return bytes;
}

// Record 0 of a MOBI book: the PalmDOC header, the MOBI header and its EXTH metadata records.
import { FormatError } from './errors.ts';

export interface MobiHeader {
  /** 1 none, 2 PalmDOC, 17480 HUFF/CDIC. */
  compression: number;
  textLength: number;
  textRecordCount: number;
  /** 0 none, 1 old Mobipocket, 2 Mobipocket DRM. */
  encryption: number;
  /** False for plain PalmDOC (`TEXtREAd`) books, which stop after the PalmDOC header. */
  hasMobiHeader: boolean;
  /** 1252 or 65001. */
  textEncoding: number;
  /** 6 for classic MOBI, 8 for KF8 (AZW3). */
  fileVersion: number;
  fullName: string | undefined;
  locale: number;
  /** Record index of the first image, undefined when the book declares none. */
  firstImageIndex: number | undefined;
  /** EXTH records by type, values in file order. */
  exth: Map<number, Buffer[]>;
}

const PALMDOC_BYTES = 16;
const MOBI_MAGIC = 'MOBI';
const EXTH_MAGIC = 'EXTH';
const EXTH_PRESENT_FLAG = 0x40;
const NO_INDEX = 0xffffffff;

/** The MOBI header fields we read, as offsets from the start of record 0. */
const FIELD = {
  headerLength: 20,
  textEncoding: 28,
  fileVersion: 36,
  fullNameOffset: 84,
  fullNameLength: 88,
  locale: 92,
  firstImageIndex: 108,
  exthFlags: 128,
} as const;

function u32(record: Buffer, offset: number): number | undefined {
  return offset + 4 <= record.length ? record.readUInt32BE(offset) : undefined;
}

export function decodeMobiText(bytes: Buffer, encoding: number): string {
  return new TextDecoder(encoding === 1252 ? 'windows-1252' : 'utf-8').decode(bytes);
}

function parseExth(record: Buffer, start: number): Map<number, Buffer[]> {
  const exth = new Map<number, Buffer[]>();
  if (start + 12 > record.length || record.toString('latin1', start, start + 4) !== EXTH_MAGIC) {
    throw new FormatError('CORRUPT', 'MOBI header announces EXTH metadata that is not there');
  }
  const declaredLength = record.readUInt32BE(start + 4);
  const count = record.readUInt32BE(start + 8);
  const end = Math.min(record.length, start + declaredLength);
  let position = start + 12;
  for (let i = 0; i < count; i++) {
    if (position + 8 > end) throw new FormatError('CORRUPT', `EXTH record ${i} of ${count} starts past the EXTH block`);
    const type = record.readUInt32BE(position);
    const length = record.readUInt32BE(position + 4);
    if (length < 8 || position + length > end) throw new FormatError('CORRUPT', `EXTH record ${i} (type ${type}) has a bad length ${length}`);
    const values = exth.get(type) ?? [];
    values.push(record.subarray(position + 8, position + length));
    exth.set(type, values);
    position += length;
  }
  return exth;
}

export function parseRecordZero(record: Buffer): MobiHeader {
  if (record.length < PALMDOC_BYTES) throw new FormatError('CORRUPT', `record 0 is ${record.length} bytes, too short for a PalmDOC header`);
  const header: MobiHeader = {
    compression: record.readUInt16BE(0),
    textLength: record.readUInt32BE(4),
    textRecordCount: record.readUInt16BE(8),
    encryption: record.readUInt16BE(12),
    hasMobiHeader: false,
    textEncoding: 1252,
    fileVersion: 0,
    fullName: undefined,
    locale: 0,
    firstImageIndex: undefined,
    exth: new Map(),
  };
  if (record.length < PALMDOC_BYTES + 8 || record.toString('latin1', PALMDOC_BYTES, PALMDOC_BYTES + 4) !== MOBI_MAGIC) return header;

  header.hasMobiHeader = true;
  const headerLength = u32(record, FIELD.headerLength) ?? 0;
  const mobiEnd = PALMDOC_BYTES + headerLength;
  if (headerLength < 24 || mobiEnd > record.length) throw new FormatError('CORRUPT', `MOBI header length ${headerLength} runs past record 0`);
  const field = (offset: number): number | undefined => (offset + 4 <= mobiEnd ? u32(record, offset) : undefined);

  header.textEncoding = field(FIELD.textEncoding) ?? 1252;
  header.fileVersion = field(FIELD.fileVersion) ?? 0;
  header.locale = field(FIELD.locale) ?? 0;
  const firstImage = field(FIELD.firstImageIndex);
  header.firstImageIndex = firstImage === undefined || firstImage === NO_INDEX ? undefined : firstImage;

  const nameOffset = field(FIELD.fullNameOffset);
  const nameLength = field(FIELD.fullNameLength);
  if (nameOffset !== undefined && nameLength !== undefined && nameLength > 0) {
    if (nameOffset + nameLength > record.length) throw new FormatError('CORRUPT', 'MOBI full name lies outside record 0');
    header.fullName = decodeMobiText(record.subarray(nameOffset, nameOffset + nameLength), header.textEncoding);
  }

  const flags = field(FIELD.exthFlags) ?? 0;
  if (flags & EXTH_PRESENT_FLAG) header.exth = parseExth(record, mobiEnd);
  return header;
}

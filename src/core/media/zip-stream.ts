// Writes a ZIP archive of files as a stream: entries are stored (books are already compressed), CRCs are computed while
// the bytes pass, and sizes follow in data descriptors, so nothing is buffered or written to a temp file. ZIP64 when needed.
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';

export interface ZipEntrySource {
  /** Name inside the archive (`/`-separated). */
  name: string;
  path: string;
  /** Size when the archive was planned; decides whether the entry needs ZIP64 fields. */
  size: number;
  mtime: Date;
}

export interface ZipStreamOptions {
  /** Sizes and offsets at or above this use ZIP64 records; lowered only by tests. */
  zip64Threshold?: number;
}

const MAX32 = 0xffffffff;
const FLAGS = 0x0808; // bit 3: sizes in a data descriptor; bit 11: UTF-8 names

function dosDateTime(date: Date): { time: number; date: number } {
  const year = Math.max(1980, date.getFullYear());
  return {
    time: (date.getHours() << 11) | (date.getMinutes() << 5) | Math.floor(date.getSeconds() / 2),
    date: ((year - 1980) << 9) | ((date.getMonth() + 1) << 5) | date.getDate(),
  };
}

interface Written {
  name: Buffer;
  crc: number;
  size: number;
  offset: number;
  zip64: boolean;
  time: number;
  date: number;
}

function localHeader(name: Buffer, zip64: boolean, when: { time: number; date: number }): Buffer {
  const extra = zip64 ? Buffer.alloc(20) : Buffer.alloc(0);
  if (zip64) {
    extra.writeUInt16LE(0x0001, 0);
    extra.writeUInt16LE(16, 2); // original and compressed size, both unknown (0) until the descriptor
  }
  const header = Buffer.alloc(30);
  header.writeUInt32LE(0x04034b50, 0);
  header.writeUInt16LE(zip64 ? 45 : 20, 4);
  header.writeUInt16LE(FLAGS, 6);
  header.writeUInt16LE(0, 8);
  header.writeUInt16LE(when.time, 10);
  header.writeUInt16LE(when.date, 12);
  header.writeUInt32LE(0, 14);
  header.writeUInt32LE(zip64 ? MAX32 : 0, 18);
  header.writeUInt32LE(zip64 ? MAX32 : 0, 22);
  header.writeUInt16LE(name.length, 26);
  header.writeUInt16LE(extra.length, 28);
  return Buffer.concat([header, name, extra]);
}

function dataDescriptor(entry: Written): Buffer {
  const out = Buffer.alloc(entry.zip64 ? 24 : 16);
  out.writeUInt32LE(0x08074b50, 0);
  out.writeUInt32LE(entry.crc, 4);
  if (entry.zip64) {
    out.writeBigUInt64LE(BigInt(entry.size), 8);
    out.writeBigUInt64LE(BigInt(entry.size), 16);
  } else {
    out.writeUInt32LE(entry.size, 8);
    out.writeUInt32LE(entry.size, 12);
  }
  return out;
}

function centralHeader(entry: Written, threshold: number): Buffer {
  const bigSize = entry.zip64 || entry.size >= threshold;
  const bigOffset = entry.offset >= threshold;
  const fields: bigint[] = [];
  if (bigSize) fields.push(BigInt(entry.size), BigInt(entry.size));
  if (bigOffset) fields.push(BigInt(entry.offset));
  const extra = Buffer.alloc(fields.length > 0 ? 4 + fields.length * 8 : 0);
  if (fields.length > 0) {
    extra.writeUInt16LE(0x0001, 0);
    extra.writeUInt16LE(fields.length * 8, 2);
    fields.forEach((value, i) => extra.writeBigUInt64LE(value, 4 + i * 8));
  }
  const zip64 = fields.length > 0;
  const header = Buffer.alloc(46);
  header.writeUInt32LE(0x02014b50, 0);
  header.writeUInt16LE((3 << 8) | (zip64 ? 45 : 20), 4); // made by Unix
  header.writeUInt16LE(zip64 ? 45 : 20, 6);
  header.writeUInt16LE(FLAGS, 8);
  header.writeUInt16LE(0, 10);
  header.writeUInt16LE(entry.time, 12);
  header.writeUInt16LE(entry.date, 14);
  header.writeUInt32LE(entry.crc, 16);
  header.writeUInt32LE(bigSize ? MAX32 : entry.size, 20);
  header.writeUInt32LE(bigSize ? MAX32 : entry.size, 24);
  header.writeUInt16LE(entry.name.length, 28);
  header.writeUInt16LE(extra.length, 30);
  header.writeUInt16LE(0, 32);
  header.writeUInt16LE(0, 34);
  header.writeUInt16LE(0, 36);
  header.writeUInt32LE((0o100644 << 16) >>> 0, 38);
  header.writeUInt32LE(bigOffset ? MAX32 : entry.offset, 42);
  return Buffer.concat([header, entry.name, extra]);
}

function endRecords(count: number, cdOffset: number, cdSize: number, threshold: number): Buffer {
  const zip64 = count >= 0xffff || cdOffset >= threshold || cdSize >= threshold;
  const parts: Buffer[] = [];
  if (zip64) {
    const record = Buffer.alloc(56);
    record.writeUInt32LE(0x06064b50, 0);
    record.writeBigUInt64LE(44n, 4);
    record.writeUInt16LE((3 << 8) | 45, 12);
    record.writeUInt16LE(45, 14);
    record.writeUInt32LE(0, 16);
    record.writeUInt32LE(0, 20);
    record.writeBigUInt64LE(BigInt(count), 24);
    record.writeBigUInt64LE(BigInt(count), 32);
    record.writeBigUInt64LE(BigInt(cdSize), 40);
    record.writeBigUInt64LE(BigInt(cdOffset), 48);
    const locator = Buffer.alloc(20);
    locator.writeUInt32LE(0x07064b50, 0);
    locator.writeUInt32LE(0, 4);
    locator.writeBigUInt64LE(BigInt(cdOffset + cdSize), 8);
    locator.writeUInt32LE(1, 16);
    parts.push(record, locator);
  }
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(zip64 ? 0xffff : count, 8);
  end.writeUInt16LE(zip64 ? 0xffff : count, 10);
  end.writeUInt32LE(zip64 ? MAX32 : cdSize, 12);
  end.writeUInt32LE(zip64 ? MAX32 : cdOffset, 16);
  parts.push(end);
  return Buffer.concat(parts);
}

async function* archive(entries: readonly ZipEntrySource[], threshold: number): AsyncGenerator<Buffer> {
  const written: Written[] = [];
  let offset = 0;
  for (const source of entries) {
    const name = Buffer.from(source.name, 'utf8');
    const when = dosDateTime(source.mtime);
    const entry: Written = { name, crc: 0, size: 0, offset, zip64: source.size >= threshold, ...when };
    const header = localHeader(name, entry.zip64, when);
    yield header;
    offset += header.length;
    for await (const chunk of createReadStream(source.path, { highWaterMark: 256 * 1024 })) {
      const bytes = chunk as Buffer;
      entry.crc = crc32(bytes, entry.crc);
      entry.size += bytes.length;
      yield bytes;
    }
    if (!entry.zip64 && entry.size > MAX32) throw new Error(`${source.path} grew past 4 GiB while it was being archived`);
    offset += entry.size;
    const descriptor = dataDescriptor(entry);
    yield descriptor;
    offset += descriptor.length;
    written.push(entry);
  }
  const central = Buffer.concat(written.map((e) => centralHeader(e, threshold)));
  yield central;
  yield endRecords(written.length, offset, central.length, threshold);
}

/** A readable ZIP of the given files, in the given order. */
export function zipStream(entries: readonly ZipEntrySource[], options: ZipStreamOptions = {}): Readable {
  return Readable.from(archive(entries, options.zip64Threshold ?? MAX32), { objectMode: false });
}

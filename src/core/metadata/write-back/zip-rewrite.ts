// Replaces (or adds) one entry of a ZIP archive and copies every other entry byte for byte: no entry is inflated or
// compressed again, the order of entries stays (so an EPUB's stored `mimetype` stays first), and the prefix, extra
// fields, comments and timestamps of the archive are kept.
import { open, type FileHandle } from 'node:fs/promises';
import { crc32, deflateRawSync } from 'node:zlib';
import { LIMITS } from '../../formats/limits.ts';
import { WriteBackError } from './types.ts';

const EOCD_SIGNATURE = 0x06054b50;
const ZIP64_LOCATOR_SIGNATURE = 0x07064b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const LOCAL_SIGNATURE = 0x04034b50;
const EOCD_MIN = 22;
const MAX_COMMENT = 0xffff;
const COPY_CHUNK = 1024 * 1024;
/** A central directory this large means tens of thousands of entries; more is refused rather than held. */
const MAX_CENTRAL_DIRECTORY = 64 * 1024 * 1024;

const FLAG_ENCRYPTED = 0x0001;
const FLAG_DATA_DESCRIPTOR = 0x0008;
const FLAG_UTF8 = 0x0800;

export interface CentralEntry {
  name: string;
  /** Offset of this entry's record inside the central directory buffer, and its length. */
  recordOffset: number;
  recordLength: number;
  flags: number;
  method: number;
  crc: number;
  compressedSize: number;
  uncompressedSize: number;
  localOffset: number;
  dosTime: number;
  dosDate: number;
}

export interface ZipLayout {
  fileSize: number;
  centralOffset: number;
  centralSize: number;
  central: Buffer;
  /** End-of-central-directory record with the archive comment, as written. */
  eocd: Buffer;
  eocdOffset: number;
  entries: CentralEntry[];
}

function corrupt(message: string): WriteBackError {
  return new WriteBackError('CORRUPT', message);
}

async function readAt(handle: FileHandle, offset: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await handle.read(buffer, done, length - done, offset + done);
    if (bytesRead === 0) throw corrupt('the archive ends before its central directory says it should');
    done += bytesRead;
  }
  return buffer;
}

/** The layout of the archive at `path`, `fileSize` bytes long (see readZipLayout). */
export async function readZipLayoutOf(path: string, fileSize: number): Promise<ZipLayout> {
  const handle = await open(path, 'r');
  try {
    return await readZipLayout(handle, fileSize);
  } finally {
    await handle.close();
  }
}

/** Reads the end record and central directory; refuses what could not be rewritten faithfully. */
export async function readZipLayout(handle: FileHandle, fileSize: number): Promise<ZipLayout> {
  if (fileSize < EOCD_MIN) throw corrupt('too small to be a ZIP archive');
  const tailLength = Math.min(fileSize, EOCD_MIN + MAX_COMMENT);
  const tail = await readAt(handle, fileSize - tailLength, tailLength);
  let at = -1;
  for (let i = tail.length - EOCD_MIN; i >= 0; i--) {
    if (tail.readUInt32LE(i) === EOCD_SIGNATURE && i + EOCD_MIN + tail.readUInt16LE(i + 20) === tail.length) {
      at = i;
      break;
    }
  }
  if (at === -1) throw corrupt('no end-of-central-directory record');
  const eocdOffset = fileSize - tailLength + at;
  const eocd = Buffer.from(tail.subarray(at));
  if (eocd.readUInt16LE(4) !== 0 || eocd.readUInt16LE(6) !== 0) throw new WriteBackError('UNSUPPORTED', 'multi-volume archives are not rewritten');
  const count = eocd.readUInt16LE(10);
  const centralSize = eocd.readUInt32LE(12);
  const centralOffset = eocd.readUInt32LE(16);
  if (count === 0xffff || centralSize === 0xffffffff || centralOffset === 0xffffffff) throw new WriteBackError('UNSUPPORTED', 'ZIP64 archives are not rewritten');
  if (at >= 20 && tail.readUInt32LE(at - 20) === ZIP64_LOCATOR_SIGNATURE) throw new WriteBackError('UNSUPPORTED', 'ZIP64 archives are not rewritten');
  if (count > LIMITS.maxEntries) throw new WriteBackError('UNSUPPORTED', `the archive has ${count} entries`);
  if (centralSize > MAX_CENTRAL_DIRECTORY || centralOffset + centralSize > eocdOffset) throw corrupt('the central directory lies outside the archive');
  const central = await readAt(handle, centralOffset, centralSize);

  const entries: CentralEntry[] = [];
  let p = 0;
  for (let i = 0; i < count; i++) {
    if (p + 46 > central.length || central.readUInt32LE(p) !== CENTRAL_SIGNATURE) throw corrupt('a central directory record is damaged');
    const nameLength = central.readUInt16LE(p + 28);
    const extraLength = central.readUInt16LE(p + 30);
    const commentLength = central.readUInt16LE(p + 32);
    const recordLength = 46 + nameLength + extraLength + commentLength;
    if (p + recordLength > central.length) throw corrupt('a central directory record is damaged');
    const flags = central.readUInt16LE(p + 8);
    const nameBytes = central.subarray(p + 46, p + 46 + nameLength);
    const entry: CentralEntry = {
      name: flags & FLAG_UTF8 ? nameBytes.toString('utf8') : nameBytes.toString('latin1'),
      recordOffset: p,
      recordLength,
      flags,
      method: central.readUInt16LE(p + 10),
      dosTime: central.readUInt16LE(p + 12),
      dosDate: central.readUInt16LE(p + 14),
      crc: central.readUInt32LE(p + 16),
      compressedSize: central.readUInt32LE(p + 20),
      uncompressedSize: central.readUInt32LE(p + 24),
      localOffset: central.readUInt32LE(p + 42),
    };
    if (central.readUInt16LE(p + 34) !== 0) throw new WriteBackError('UNSUPPORTED', 'multi-volume archives are not rewritten');
    if (entry.compressedSize === 0xffffffff || entry.uncompressedSize === 0xffffffff || entry.localOffset === 0xffffffff) {
      throw new WriteBackError('UNSUPPORTED', 'ZIP64 archives are not rewritten');
    }
    if (entry.localOffset >= centralOffset) throw corrupt(`entry ${entry.name} starts past the entries`);
    entries.push(entry);
    p += recordLength;
  }
  const offsets = new Set(entries.map((e) => e.localOffset));
  if (offsets.size !== entries.length) throw corrupt('two entries share one local header');
  return { fileSize, centralOffset, centralSize, central, eocd, eocdOffset, entries };
}

/** Date and time in the MS-DOS form ZIP headers use. */
function dosDateTime(date: Date): { dosTime: number; dosDate: number } {
  const year = Math.max(1980, date.getFullYear());
  return {
    dosTime: (date.getHours() << 11) | (date.getMinutes() << 5) | Math.floor(date.getSeconds() / 2),
    dosDate: ((year - 1980) << 9) | ((date.getMonth() + 1) << 5) | date.getDate(),
  };
}

interface Compressed {
  method: number;
  data: Buffer;
  crc: number;
  size: number;
}

function compress(content: Buffer, method: number): Compressed {
  if (method !== 0 && method !== 8) throw new WriteBackError('UNSUPPORTED', `entry compression method ${method} is not rewritten`);
  // Level 9 and zlib's defaults: the same content always compresses to the same bytes.
  const data = method === 8 ? deflateRawSync(content, { level: 9 }) : content;
  return { method, data, crc: crc32(content), size: content.length };
}

export interface EntryChange {
  /** Name of the entry to replace; when absent from the archive, the entry is added at the end. */
  name: string;
  content: Buffer;
}

/** Copies `[from, to)` of the source into the output. */
async function copyRange(source: FileHandle, out: FileHandle, from: number, to: number, position: number): Promise<number> {
  const buffer = Buffer.allocUnsafe(Math.min(COPY_CHUNK, Math.max(1, to - from)));
  let offset = from;
  let written = position;
  while (offset < to) {
    const length = Math.min(buffer.length, to - offset);
    const { bytesRead } = await source.read(buffer, 0, length, offset);
    if (bytesRead === 0) throw corrupt('the archive ended while it was being copied');
    await out.write(buffer, 0, bytesRead, written);
    offset += bytesRead;
    written += bytesRead;
  }
  return written;
}

/**
 * Writes `destPath` as a copy of the archive at `sourcePath` (whose layout is given) with one entry replaced or
 * added. The replaced entry keeps its place, name, timestamps, extra fields and compression method; an added entry
 * is deflated and takes the newest timestamp found in the archive.
 */
export async function rewriteZipEntry(sourcePath: string, destPath: string, layout: ZipLayout, change: EntryChange): Promise<void> {
  const source = await open(sourcePath, 'r');
  try {
    const out = await open(destPath, 'wx', 0o600);
    try {
      await writeRewritten(source, out, layout, change);
      await out.sync();
    } finally {
      await out.close();
    }
  } finally {
    await source.close();
  }
}

async function writeRewritten(source: FileHandle, out: FileHandle, layout: ZipLayout, change: EntryChange): Promise<void> {
  const ordered = [...layout.entries].sort((a, b) => a.localOffset - b.localOffset);
  const matching = layout.entries.filter((e) => e.name === change.name);
  if (matching.length > 1) throw new WriteBackError('UNSUPPORTED', `the archive holds ${change.name} more than once`);
  const target = matching[0];
  if (target && target.flags & FLAG_ENCRYPTED) throw new WriteBackError('UNSUPPORTED', `entry ${target.name} is encrypted`);
  const central = Buffer.from(layout.central);
  let position = 0;
  const firstOffset = ordered[0]?.localOffset ?? layout.centralOffset;
  position = await copyRange(source, out, 0, firstOffset, position);

  for (let i = 0; i < ordered.length; i++) {
    const entry = ordered[i] as CentralEntry;
    const spanEnd = ordered[i + 1]?.localOffset ?? layout.centralOffset;
    const newOffset = position;
    if (entry !== target) {
      position = await copyRange(source, out, entry.localOffset, spanEnd, position);
      central.writeUInt32LE(newOffset, entry.recordOffset + 42);
      continue;
    }
    const local = await readAt(source, entry.localOffset, 30);
    if (local.readUInt32LE(0) !== LOCAL_SIGNATURE) throw corrupt(`entry ${entry.name} has no local header`);
    const header = await readAt(source, entry.localOffset, 30 + local.readUInt16LE(26) + local.readUInt16LE(28));
    const packed = compress(change.content, entry.method);
    const flags = header.readUInt16LE(6) & ~FLAG_DATA_DESCRIPTOR;
    header.writeUInt16LE(flags, 6);
    header.writeUInt16LE(packed.method, 8);
    header.writeUInt32LE(packed.crc, 14);
    header.writeUInt32LE(packed.data.length, 18);
    header.writeUInt32LE(packed.size, 22);
    await out.write(header, 0, header.length, position);
    position += header.length;
    await out.write(packed.data, 0, packed.data.length, position);
    position += packed.data.length;
    const r = entry.recordOffset;
    central.writeUInt16LE(central.readUInt16LE(r + 8) & ~FLAG_DATA_DESCRIPTOR, r + 8);
    central.writeUInt16LE(packed.method, r + 10);
    central.writeUInt32LE(packed.crc, r + 16);
    central.writeUInt32LE(packed.data.length, r + 20);
    central.writeUInt32LE(packed.size, r + 24);
    central.writeUInt32LE(newOffset, r + 42);
  }

  let extraRecord = Buffer.alloc(0);
  if (!target) {
    const newest = ordered.reduce<CentralEntry | undefined>((best, e) => (!best || e.dosDate > best.dosDate || (e.dosDate === best.dosDate && e.dosTime > best.dosTime) ? e : best), undefined);
    const stamp = newest ? { dosTime: newest.dosTime, dosDate: newest.dosDate } : dosDateTime(new Date(2000, 0, 1));
    const packed = compress(change.content, 8);
    const name = Buffer.from(change.name, 'utf8');
    const flags = /[^\x20-\x7e]/.test(change.name) ? FLAG_UTF8 : 0;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(LOCAL_SIGNATURE, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(8, 8);
    local.writeUInt16LE(stamp.dosTime, 10);
    local.writeUInt16LE(stamp.dosDate, 12);
    local.writeUInt32LE(packed.crc, 14);
    local.writeUInt32LE(packed.data.length, 18);
    local.writeUInt32LE(packed.size, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    const localOffset = position;
    for (const part of [local, name, packed.data]) {
      await out.write(part, 0, part.length, position);
      position += part.length;
    }
    extraRecord = Buffer.alloc(46 + name.length);
    extraRecord.writeUInt32LE(CENTRAL_SIGNATURE, 0);
    extraRecord.writeUInt16LE(0x0314, 4);
    extraRecord.writeUInt16LE(20, 6);
    extraRecord.writeUInt16LE(flags, 8);
    extraRecord.writeUInt16LE(8, 10);
    extraRecord.writeUInt16LE(stamp.dosTime, 12);
    extraRecord.writeUInt16LE(stamp.dosDate, 14);
    extraRecord.writeUInt32LE(packed.crc, 16);
    extraRecord.writeUInt32LE(packed.data.length, 20);
    extraRecord.writeUInt32LE(packed.size, 24);
    extraRecord.writeUInt16LE(name.length, 28);
    extraRecord.writeUInt32LE((0o100644 << 16) >>> 0, 38);
    extraRecord.writeUInt32LE(localOffset, 42);
    name.copy(extraRecord, 46);
  }

  const centralOffset = position;
  const fullCentral = Buffer.concat([central, extraRecord]);
  await out.write(fullCentral, 0, fullCentral.length, position);
  position += fullCentral.length;
  // Anything between the central directory and the end record is carried over as it was.
  position = await copyRange(source, out, layout.centralOffset + layout.centralSize, layout.eocdOffset, position);
  const eocd = Buffer.from(layout.eocd);
  const count = layout.entries.length + (target ? 0 : 1);
  if (count > 0xfffe || position > 0xfffffffe) throw new WriteBackError('UNSUPPORTED', 'the rewritten archive would need ZIP64');
  eocd.writeUInt16LE(count, 8);
  eocd.writeUInt16LE(count, 10);
  eocd.writeUInt32LE(fullCentral.length, 12);
  eocd.writeUInt32LE(centralOffset, 16);
  await out.write(eocd, 0, eocd.length, position);
}

// A minimal RAR encoder for tests: stores entries uncompressed (RAR 4 method 0x30, RAR 5 "store"), so real
// RAR archives can be generated without the proprietary rar tool.
import { crc32 } from 'node:zlib';

export interface RarEntry {
  name: string;
  data?: Buffer;
  directory?: boolean;
  /** Declared unpacked size, to forge headers that lie about their contents. Defaults to the data length. */
  declaredSize?: number;
}

export type RarVersion = 4 | 5;

const DOS_EPOCH_2020 = ((2020 - 1980) << 25) | (1 << 21) | (1 << 16);
const UNIX_FILE_MODE = 0o100644;
const UNIX_DIR_MODE = 0o40755;

export function writeRar(version: RarVersion, entries: RarEntry[]): Buffer {
  return version === 4 ? writeRar4(entries) : writeRar5(entries);
}

// ---- RAR 1.5–4.x ----

const RAR4_SIGNATURE = Buffer.from([0x52, 0x61, 0x72, 0x21, 0x1a, 0x07, 0x00]);
const RAR4_MAIN_HEAD = 0x73;
const RAR4_FILE_HEAD = 0x74;
const RAR4_END_HEAD = 0x7b;
const RAR4_LONG_BLOCK = 0x8000;
const RAR4_UNICODE_NAME = 0x0200;
const RAR4_DIRECTORY = 0x00e0;
const RAR4_SKIP_IF_UNKNOWN = 0x4000;
const RAR4_HOST_UNIX = 3;
const RAR4_STORE = 0x30;

/** A RAR 4 block: the CRC16 (low half of CRC32) covers everything after the CRC field itself. */
function rar4Block(type: number, flags: number, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt8(type, 0);
  head.writeUInt16LE(flags, 1);
  head.writeUInt16LE(7 + body.length, 3);
  const covered = Buffer.concat([head, body]);
  const crc = Buffer.alloc(2);
  crc.writeUInt16LE(crc32(covered) & 0xffff, 0);
  return Buffer.concat([crc, covered]);
}

function writeRar4(entries: RarEntry[]): Buffer {
  const parts: Buffer[] = [RAR4_SIGNATURE, rar4Block(RAR4_MAIN_HEAD, 0, Buffer.alloc(6))];
  for (const entry of entries) {
    const data = entry.directory ? Buffer.alloc(0) : (entry.data ?? Buffer.alloc(0));
    const name = Buffer.from(entry.name, 'utf8');
    const fixed = Buffer.alloc(25);
    fixed.writeUInt32LE(data.length, 0);
    fixed.writeUInt32LE(entry.declaredSize ?? data.length, 4);
    fixed.writeUInt8(RAR4_HOST_UNIX, 8);
    fixed.writeUInt32LE(crc32(data), 9);
    fixed.writeUInt32LE(DOS_EPOCH_2020, 13);
    fixed.writeUInt8(29, 17);
    fixed.writeUInt8(RAR4_STORE, 18);
    fixed.writeUInt16LE(name.length, 19);
    fixed.writeUInt32LE(entry.directory ? UNIX_DIR_MODE : UNIX_FILE_MODE, 21);
    let flags = RAR4_LONG_BLOCK;
    if (entry.directory) flags |= RAR4_DIRECTORY;
    if (/[^\x20-\x7e]/.test(entry.name)) flags |= RAR4_UNICODE_NAME;
    parts.push(rar4Block(RAR4_FILE_HEAD, flags, Buffer.concat([fixed, name])), data);
  }
  parts.push(rar4Block(RAR4_END_HEAD, RAR4_SKIP_IF_UNKNOWN, Buffer.alloc(0)));
  return Buffer.concat(parts);
}

// ---- RAR 5.0 ----

const RAR5_SIGNATURE = Buffer.from([0x52, 0x61, 0x72, 0x21, 0x1a, 0x07, 0x01, 0x00]);
const RAR5_MAIN_HEAD = 1;
const RAR5_FILE_HEAD = 2;
const RAR5_END_HEAD = 5;
const RAR5_HAS_DATA = 0x02;
const RAR5_FILE_IS_DIRECTORY = 0x01;
const RAR5_FILE_HAS_MTIME = 0x02;
const RAR5_FILE_HAS_CRC = 0x04;
const RAR5_HOST_UNIX = 1;
const UNIX_TIME_2020 = Date.UTC(2020, 0, 1) / 1000;

/** Variable-length integer: seven bits per byte, least significant group first, high bit = more follows. */
export function vint(value: number): Buffer {
  const bytes: number[] = [];
  let rest = value;
  do {
    let byte = rest % 128;
    rest = Math.floor(rest / 128);
    if (rest > 0) byte |= 0x80;
    bytes.push(byte);
  } while (rest > 0);
  return Buffer.from(bytes);
}

function uint32(value: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(value >>> 0, 0);
  return b;
}

/** A RAR 5 header: CRC32 of (size field + body), then the size as a vint, then the body (type, flags, fields). */
function rar5Header(body: Buffer): Buffer {
  const sized = Buffer.concat([vint(body.length), body]);
  return Buffer.concat([uint32(crc32(sized)), sized]);
}

function writeRar5(entries: RarEntry[]): Buffer {
  const parts: Buffer[] = [RAR5_SIGNATURE];
  parts.push(rar5Header(Buffer.concat([vint(RAR5_MAIN_HEAD), vint(0), vint(0)])));
  for (const entry of entries) {
    const data = entry.directory ? Buffer.alloc(0) : (entry.data ?? Buffer.alloc(0));
    const name = Buffer.from(entry.name, 'utf8');
    let fileFlags = RAR5_FILE_HAS_MTIME;
    if (entry.directory) fileFlags |= RAR5_FILE_IS_DIRECTORY;
    else fileFlags |= RAR5_FILE_HAS_CRC;
    const fields = [
      vint(RAR5_FILE_HEAD),
      vint(RAR5_HAS_DATA),
      vint(data.length),
      vint(fileFlags),
      vint(entry.declaredSize ?? data.length),
      vint(entry.directory ? UNIX_DIR_MODE : UNIX_FILE_MODE),
      uint32(UNIX_TIME_2020),
      ...(entry.directory ? [] : [uint32(crc32(data))]),
      vint(0), // compression info: version 0, not solid, method 0 (store), smallest dictionary
      vint(RAR5_HOST_UNIX),
      vint(name.length),
      name,
    ];
    parts.push(rar5Header(Buffer.concat(fields)), data);
  }
  parts.push(rar5Header(Buffer.concat([vint(RAR5_END_HEAD), vint(0), vint(0)])));
  return Buffer.concat(parts);
}

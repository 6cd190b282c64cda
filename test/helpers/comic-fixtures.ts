// Generates real comic archives (CBZ via yazl, CB7 via 7za, CBR via the test RAR writer) in a private temp dir.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { crc32 } from 'node:zlib';
import { path7za } from '7zip-bin';
import { execa } from 'execa';
import sharp from 'sharp';
import yazl from 'yazl';
import { writeRar } from './rar-writer.ts';
import type { RarVersion } from './rar-writer.ts';

export interface FixtureEntry {
  name: string;
  data: Buffer | string;
  /** Deflate the entry (ZIP only); stored by default so tests are fast. */
  compress?: boolean;
}

export { makeTempDir, type TempDir } from './temp-dir.ts';

const asBuffer = (data: Buffer | string): Buffer => (typeof data === 'string' ? Buffer.from(data, 'utf8') : data);

/** A small solid-colour JPEG; different colours give different bytes, so pages can be told apart. */
export async function jpeg(color = '#c33', width = 8, height = 12): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: color } }).jpeg().toBuffer();
}

export async function png(color = '#3c3', width = 8, height = 12): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: color } }).png().toBuffer();
}

/** A valid PNG whose header declares `width` × `height` pixels while holding a tiny image: a decompression trap. */
export async function pngDeclaring(width: number, height: number): Promise<Buffer> {
  const real = Buffer.from(await png('#333', 1, 1));
  // Signature (8) + IHDR length (4) + "IHDR" (4): width and height follow, then the chunk CRC over type + data.
  real.writeUInt32BE(width, 16);
  real.writeUInt32BE(height, 20);
  real.writeUInt32BE(crc32(real.subarray(12, 29)), 29);
  return real;
}

function escapeXml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** ComicInfo.xml with the given elements (in order); `extra` is appended raw inside the root. */
export function comicInfoXml(fields: Record<string, string | number>, extra = ''): string {
  const body = Object.entries(fields)
    .map(([key, value]) => `  <${key}>${escapeXml(String(value))}</${key}>`)
    .join('\n');
  return [
    '<?xml version="1.0" encoding="utf-8"?>',
    '<ComicInfo xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">',
    body,
    extra,
    '</ComicInfo>',
  ].join('\n');
}

export async function zipBuffer(entries: FixtureEntry[]): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const entry of entries) {
    zip.addBuffer(asBuffer(entry.data), entry.name, { compress: entry.compress ?? false, mtime: new Date(Date.UTC(2020, 0, 1)) });
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

export async function writeZip(path: string, entries: FixtureEntry[]): Promise<string> {
  writeFileSync(path, await zipBuffer(entries));
  return path;
}

/**
 * yazl refuses hostile names, so a zip is built with a same-length placeholder and the name is then patched in
 * both the local header and the central directory (names are outside every CRC).
 */
export function patchName(zip: Buffer, placeholder: string, hostile: string): Buffer {
  if (Buffer.byteLength(placeholder) !== Buffer.byteLength(hostile)) throw new Error('names must have the same length');
  const from = Buffer.from(placeholder);
  const to = Buffer.from(hostile);
  const out = Buffer.from(zip);
  let at = out.indexOf(from);
  let patched = 0;
  while (at !== -1) {
    to.copy(out, at);
    patched += 1;
    at = out.indexOf(from, at + to.length);
  }
  if (patched === 0) throw new Error(`placeholder ${placeholder} not found`);
  return out;
}

export function writeCbr(path: string, version: RarVersion, entries: (FixtureEntry & { declaredSize?: number; directory?: boolean })[]): string {
  writeFileSync(
    path,
    writeRar(
      version,
      entries.map((e) => ({ name: e.name, data: asBuffer(e.data), declaredSize: e.declaredSize, directory: e.directory })),
    ),
  );
  return path;
}

/** The bundled 7za, with the exec bit some installs lose. */
export function sevenZip(): string {
  chmodSync(path7za, 0o755);
  return path7za;
}

/**
 * Builds a .cb7 with 7za from files staged in a private folder. Names are stored as given, relative to the
 * staging folder; `fullPaths` stores them verbatim instead (-spf), which is how `../` names get into an archive.
 */
export async function writeCb7(
  path: string,
  entries: FixtureEntry[],
  options: { solid?: boolean; password?: string; encryptHeaders?: boolean; fullPaths?: boolean } = {},
): Promise<string> {
  const staging = mkdtempSync(join(tmpdir(), 'bindery-7z-'));
  try {
    const root = join(staging, 'root');
    mkdirSync(root);
    for (const entry of entries) {
      const target = join(root, entry.name);
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, asBuffer(entry.data));
    }
    const switches = [`-ms=${options.solid === false ? 'off' : 'on'}`];
    if (options.password) switches.push(`-p${options.password}`);
    if (options.encryptHeaders) switches.push('-mhe=on');
    if (options.fullPaths) switches.push('-spf');
    await execa(sevenZip(), ['a', '-t7z', ...switches, path, '--', ...entries.map((e) => e.name)], {
      cwd: root,
      stdin: 'ignore',
      // Without a UTF-8 locale (a bare environment) p7zip would store non-ASCII names as Latin-1 bytes.
      env: { LC_ALL: 'C.UTF-8', LANG: 'C.UTF-8' },
    });
    return path;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * A ZIP of stored entries built directly (yazl takes minutes for 100,000 entries): local headers, data, central
 * directory, end record. Enough for archives with very many small entries.
 */
export function storedZip(entries: { name: string; data: Buffer }[]): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const { name, data } of entries) {
    const nameBytes = Buffer.from(name, 'utf8');
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const header = Buffer.alloc(46);
    header.writeUInt32LE(0x02014b50, 0);
    header.writeUInt16LE(20, 4);
    header.writeUInt16LE(20, 6);
    header.writeUInt32LE(crc, 16);
    header.writeUInt32LE(data.length, 20);
    header.writeUInt32LE(data.length, 24);
    header.writeUInt16LE(nameBytes.length, 28);
    header.writeUInt32LE(offset, 42);
    parts.push(local, nameBytes, data);
    central.push(header, nameBytes);
    offset += 30 + nameBytes.length + data.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Math.min(entries.length, 0xffff), 8);
  end.writeUInt16LE(Math.min(entries.length, 0xffff), 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  if (entries.length < 0xffff) return Buffer.concat([...parts, directory, end]);
  // More entries than the end record can count: the zip64 end record and its locator say how many.
  const zip64 = Buffer.alloc(56);
  zip64.writeUInt32LE(0x06064b50, 0);
  zip64.writeBigUInt64LE(44n, 4);
  zip64.writeUInt16LE(45, 12);
  zip64.writeUInt16LE(45, 14);
  zip64.writeBigUInt64LE(BigInt(entries.length), 24);
  zip64.writeBigUInt64LE(BigInt(entries.length), 32);
  zip64.writeBigUInt64LE(BigInt(directory.length), 40);
  zip64.writeBigUInt64LE(BigInt(offset), 48);
  const locator = Buffer.alloc(20);
  locator.writeUInt32LE(0x07064b50, 0);
  locator.writeBigUInt64LE(BigInt(offset + directory.length), 8);
  locator.writeUInt32LE(1, 16);
  return Buffer.concat([...parts, directory, zip64, locator, end]);
}

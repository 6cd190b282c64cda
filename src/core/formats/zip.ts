// Read-only, bounded access to ZIP containers (EPUB, CBZ, zipped FB2) without inflating whole books.
import { createInflateRaw, inflateRaw, inflateRawSync, type ZlibOptions } from 'node:zlib';
import yauzl from 'yauzl';
import { FormatError } from './errors.ts';
import { openFileRanges, type FileRanges } from './file-ranges.ts';
import { LIMITS } from './limits.ts';

export interface ZipEntryInfo {
  name: string;
  size: number;
  compressedSize: number;
  isDirectory: boolean;
}

export interface ZipOpenOptions {
  /**
   * Read with blocking calls. Meant for scan worker threads, where nothing else waits on the thread and every trip
   * through libuv's thread pool costs more than the small read it carries; elsewhere the default keeps the event
   * loop free.
   */
  blocking?: boolean;
}

/** What the central directory says about one entry, beyond what callers see. */
interface Entry extends ZipEntryInfo {
  flags: number;
  method: number;
  localHeaderOffset: number;
}

/** Byte-range reads of one open file, either blocking or through the thread pool. */
interface Source {
  size: number;
  read(position: number, length: number): Buffer | Promise<Buffer>;
  close(): void;
}

const UNSAFE_NAME = /^(invalid characters in fileName|absolute path|invalid relative path)/;
const EOCD_SIZE = 22;
const ZIP64_LOCATOR_SIZE = 20;
const MAX_COMMENT = 0xffff;
const CENTRAL_HEADER_SIZE = 46;
const LOCAL_HEADER_SIZE = 30;

function toFormatError(error: unknown): FormatError {
  if (error instanceof FormatError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (UNSAFE_NAME.test(message)) return new FormatError('UNSAFE', `unsafe archive entry name (${message})`);
  const code = (error as NodeJS.ErrnoException)?.code;
  if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR') return new FormatError('IO', message);
  return new FormatError('CORRUPT', `not a readable zip archive: ${message}`);
}

const corrupt = (message: string): Error => new Error(message);

function readUInt64(buffer: Buffer, offset: number): number {
  const value = buffer.readBigUInt64LE(offset);
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw corrupt('64-bit size or offset out of range');
  return Number(value);
}

function exactRead(bytes: Buffer, length: number): Buffer {
  if (bytes.length < length) throw corrupt('unexpected end of file');
  return bytes;
}

/** The file's ranges, every read required to be whole. */
function exactSource(ranges: FileRanges): Source {
  return {
    size: ranges.size,
    read: (position, length) => {
      const bytes = ranges.read(position, length);
      return bytes instanceof Promise ? bytes.then((b) => exactRead(b, length)) : exactRead(bytes, length);
    },
    close: ranges.close,
  };
}

/** Where the central directory is, from the end-of-central-directory record (and its ZIP64 form). */
interface Directory {
  entryCount: number;
  offset: number;
  /** Its size as the end record declares it. */
  size: number;
  /** The central directory ends where the (ZIP64) end record starts. */
  end: number;
  /** Set when the ZIP64 end record must still be read at this offset. */
  zip64RecordAt?: number;
}

function locateDirectory(tail: Buffer, tailStart: number): Directory {
  for (let i = tail.length - EOCD_SIZE; i >= 0; i--) {
    if (tail.readUInt32LE(i) !== 0x06054b50) continue;
    const commentLength = tail.readUInt16LE(i + 20);
    if (commentLength !== tail.length - i - EOCD_SIZE) {
      throw corrupt(`invalid comment length ${commentLength}: extra bytes after the end of the archive?`);
    }
    const directory: Directory = { entryCount: tail.readUInt16LE(i + 10), size: tail.readUInt32LE(i + 12), offset: tail.readUInt32LE(i + 16), end: tailStart + i };
    const locator = i - ZIP64_LOCATOR_SIZE;
    if (locator >= 0 && tail.readUInt32LE(locator) === 0x07064b50) {
      directory.zip64RecordAt = readUInt64(tail, locator + 8);
      return directory;
    }
    if (tail.readUInt16LE(i + 4) !== 0) throw corrupt('multi-disk zip files are not supported');
    return directory;
  }
  throw corrupt('end of central directory record not found: not a zip file, or a truncated one');
}

function applyZip64Record(directory: Directory, record: Buffer): void {
  if (record.readUInt32LE(0) !== 0x06064b50) throw corrupt('invalid zip64 end of central directory record signature');
  if (record.readUInt32LE(16) !== 0) throw corrupt('multi-disk zip files are not supported');
  directory.entryCount = readUInt64(record, 32);
  directory.size = readUInt64(record, 40);
  directory.offset = readUInt64(record, 48);
  directory.end = directory.zip64RecordAt as number;
}

/** Parses every central directory header in `bytes`; names are decoded and vetted the way yauzl does it. */
function parseEntries(bytes: Buffer, count: number): Entry[] {
  const entries: Entry[] = [];
  let at = 0;
  for (let n = 0; n < count; n++) {
    if (at + CENTRAL_HEADER_SIZE > bytes.length) throw corrupt('unexpected end of the central directory');
    const signature = bytes.readUInt32LE(at);
    if (signature !== 0x02014b50) throw corrupt(`invalid central directory file header signature: 0x${signature.toString(16)}`);
    const flags = bytes.readUInt16LE(at + 8);
    const method = bytes.readUInt16LE(at + 10);
    let compressedSize = bytes.readUInt32LE(at + 20);
    let size = bytes.readUInt32LE(at + 24);
    const nameLength = bytes.readUInt16LE(at + 28);
    const extraLength = bytes.readUInt16LE(at + 30);
    const commentLength = bytes.readUInt16LE(at + 32);
    let localHeaderOffset = bytes.readUInt32LE(at + 42);
    if (flags & 0x40) throw corrupt('strong encryption is not supported');
    const nameStart = at + CENTRAL_HEADER_SIZE;
    const extraEnd = nameStart + nameLength + extraLength;
    if (extraEnd + commentLength > bytes.length) throw corrupt('unexpected end of the central directory');
    const rawName = bytes.subarray(nameStart, nameStart + nameLength);
    const extraFields = yauzl.parseExtraFields(bytes.subarray(nameStart + nameLength, extraEnd));
    const name = yauzl.getFileNameLowLevel(flags, rawName, extraFields, false);
    const unsafe = yauzl.validateFileName(name);
    if (unsafe !== null) throw corrupt(unsafe);
    const zip64 = extraFields.find((field) => field.id === 0x0001)?.data;
    if (zip64) {
      let index = 0;
      const next = (what: string): number => {
        if (index + 8 > zip64.length) throw corrupt(`zip64 extended information extra field does not include ${what}`);
        const value = readUInt64(zip64, index);
        index += 8;
        return value;
      };
      if (size === 0xffffffff) size = next('uncompressed size');
      if (compressedSize === 0xffffffff) compressedSize = next('compressed size');
      if (localHeaderOffset === 0xffffffff) localHeaderOffset = next('relative header offset');
    }
    if (method === 0 && compressedSize !== size + (flags & 0x1 ? 12 : 0)) {
      throw corrupt(`compressed/uncompressed size mismatch for stored file: ${compressedSize} != ${size}`);
    }
    entries.push({ name, size, compressedSize, isDirectory: name.endsWith('/'), flags, method, localHeaderOffset });
    at = extraEnd + commentLength;
  }
  return entries;
}

/**
 * The first `bytes` bytes that the start of a deflate stream (`data`, possibly cut short) inflates to: inflation stops
 * as soon as they are there, so a highly compressible entry never expands in memory.
 */
function inflateHead(data: Buffer, bytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const inflater = createInflateRaw({ chunkSize: 16 * 1024 });
    const chunks: Buffer[] = [];
    let length = 0;
    let settled = false;
    const done = (): void => {
      if (settled) return;
      settled = true;
      inflater.destroy();
      resolve(Buffer.concat(chunks, length).subarray(0, bytes));
    };
    inflater.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      length += chunk.length;
      if (length >= bytes) done();
    });
    inflater.on('end', done);
    // The input is usually cut short: an "unexpected end" after some output is the normal way this ends.
    inflater.on('error', (error) => {
      if (length > 0) done();
      else if (!settled) {
        settled = true;
        reject(error);
      }
    });
    inflater.end(data);
  });
}

function inflateAsync(data: Buffer, options: ZlibOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => inflateRaw(data, options, (error, result) => (error ? reject(error) : resolve(result))));
}

export class ZipArchive {
  readonly entries: ZipEntryInfo[];
  private readonly source: Source;
  private readonly byName: Map<string, { entry: Entry; info: ZipEntryInfo }>;
  private readonly blocking: boolean;
  /** The file's last bytes, read to find the directory: entries inside it need no further read. */
  private readonly tail: Buffer;
  private readonly tailStart: number;

  private constructor(source: Source, entries: Entry[], tail: Buffer, tailStart: number, blocking: boolean) {
    this.source = source;
    this.blocking = blocking;
    this.tail = tail;
    this.tailStart = tailStart;
    this.entries = entries.map((e) => ({ name: e.name, size: e.size, compressedSize: e.compressedSize, isDirectory: e.isDirectory }));
    this.byName = new Map(entries.map((entry, i) => [entry.name, { entry, info: this.entries[i] as ZipEntryInfo }]));
  }

  /** Opens and indexes the central directory; refuses unsafe names, bombs and absurd entry counts. */
  static async open(path: string, options: ZipOpenOptions = {}): Promise<ZipArchive> {
    let source: Source | undefined;
    try {
      source = exactSource(await openFileRanges(path, options.blocking ?? false));
      const tailLength = Math.min(source.size, ZIP64_LOCATOR_SIZE + EOCD_SIZE + MAX_COMMENT);
      const tailStart = source.size - tailLength;
      const tail = await source.read(tailStart, tailLength);
      const directory = locateDirectory(tail, tailStart);
      if (directory.zip64RecordAt !== undefined) applyZip64Record(directory, await ZipArchive.slice(source, tail, tailStart, directory.zip64RecordAt, 56));
      if (directory.entryCount > LIMITS.maxEntries) {
        throw new FormatError('TOO_LARGE', `archive has ${directory.entryCount} entries (limit ${LIMITS.maxEntries})`);
      }
      if (directory.offset > directory.end) throw corrupt('the central directory starts past its end');
      // Read whole: normally up to the end record, but never more than the cap (a hostile offset of 0 in a huge file).
      let length = directory.end - directory.offset;
      if (length > LIMITS.maxEntryBytes) length = Math.min(length, directory.size);
      if (length > LIMITS.maxEntryBytes) throw new FormatError('TOO_LARGE', `central directory of ${length} bytes (limit ${LIMITS.maxEntryBytes})`);
      const entries = parseEntries(await ZipArchive.slice(source, tail, tailStart, directory.offset, length), directory.entryCount);
      let total = 0;
      for (const entry of entries) {
        total += entry.size;
        const bomb = checkBomb(entry.name, entry.size, entry.compressedSize, total);
        if (bomb) throw bomb;
      }
      return new ZipArchive(source, entries, tail, tailStart, options.blocking ?? false);
    } catch (error) {
      source?.close();
      throw toFormatError(error);
    }
  }

  private static slice(source: Source, tail: Buffer, tailStart: number, position: number, length: number): Buffer | Promise<Buffer> {
    if (position >= tailStart && position + length <= tailStart + tail.length) return tail.subarray(position - tailStart, position - tailStart + length);
    if (position + length > source.size) throw corrupt('unexpected end of file');
    return source.read(position, length);
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** Finds an entry by name, ignoring case (OPF hrefs and ComicInfo.xml are often cased loosely). */
  find(name: string): ZipEntryInfo | undefined {
    const exact = this.byName.get(name);
    if (exact) return exact.info;
    const lower = name.toLowerCase();
    return this.entries.find((e) => e.name.toLowerCase() === lower);
  }

  /** Where an entry's compressed data starts, after checking it can be read at all. */
  private async dataStart(name: string, entry: Entry): Promise<number> {
    if (entry.flags & 0x1) throw corrupt(`entry ${name} is encrypted`);
    if (entry.method !== 0 && entry.method !== 8) throw corrupt(`unsupported compression method: ${entry.method}`);
    const header = await ZipArchive.slice(this.source, this.tail, this.tailStart, entry.localHeaderOffset, LOCAL_HEADER_SIZE);
    const signature = header.readUInt32LE(0);
    if (signature !== 0x04034b50) throw corrupt(`invalid local file header signature: 0x${signature.toString(16)}`);
    const dataStart = entry.localHeaderOffset + LOCAL_HEADER_SIZE + header.readUInt16LE(26) + header.readUInt16LE(28);
    if (dataStart + entry.compressedSize > this.source.size) {
      throw corrupt(`file data overflows file bounds: ${dataStart} + ${entry.compressedSize} > ${this.source.size}`);
    }
    return dataStart;
  }

  private entryNamed(name: string): Entry {
    const entry = this.byName.get(name)?.entry;
    if (!entry) throw new FormatError('CORRUPT', `archive entry not found: ${name}`);
    return entry;
  }

  /**
   * At most the first `bytes` bytes of an entry, reading and inflating no more than it takes: an image's header costs
   * the same in a 100 KB page and a 50 MB one.
   */
  async readHead(name: string, bytes: number): Promise<Buffer> {
    const entry = this.entryNamed(name);
    try {
      const start = await this.dataStart(name, entry);
      // Compressed images shrink little: as many compressed bytes as wanted ones is enough, and never more is read.
      const data = await ZipArchive.slice(this.source, this.tail, this.tailStart, start, Math.min(entry.compressedSize, bytes));
      if (entry.method === 0) return data.subarray(0, bytes);
      return await inflateHead(data, bytes);
    } catch (error) {
      throw toFormatError(error);
    }
  }

  /** Inflates one entry into memory, refusing more than `maxBytes` whatever the header claims. */
  async read(name: string, maxBytes: number = LIMITS.maxEntryBytes): Promise<Buffer> {
    const entry = this.entryNamed(name);
    if (entry.size > maxBytes) {
      throw new FormatError('TOO_LARGE', `entry ${name} is ${entry.size} bytes (limit ${maxBytes})`);
    }
    try {
      const dataStart = await this.dataStart(name, entry);
      const data = await ZipArchive.slice(this.source, this.tail, this.tailStart, dataStart, entry.compressedSize);
      if (entry.method === 0) return data;
      // One byte more than declared is enough to tell a lying header from an honest one.
      const options: ZlibOptions = { maxOutputLength: entry.size + 1 };
      let inflated: Buffer;
      try {
        inflated = this.blocking ? inflateRawSync(data, options) : await inflateAsync(data, options);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw corrupt(`entry ${name} inflates past its declared ${entry.size} bytes`);
        throw error;
      }
      if (inflated.length !== entry.size) throw corrupt(`entry ${name} inflates to ${inflated.length} bytes, not the declared ${entry.size}`);
      return inflated;
    } catch (error) {
      throw toFormatError(error);
    }
  }

  async readText(name: string, maxBytes: number = LIMITS.maxXmlBytes): Promise<string> {
    return (await this.read(name, maxBytes)).toString('utf8');
  }

  close(): void {
    this.source.close();
  }
}

/** Shared bomb rule for every archive kind: per-entry ratio and the total expanded size. */
export function checkBomb(name: string, size: number, compressedSize: number, runningTotal: number): FormatError | undefined {
  if (size > LIMITS.ratioCheckFloorBytes && compressedSize > 0 && size / compressedSize > LIMITS.maxCompressionRatio) {
    return new FormatError('TOO_LARGE', `entry ${name} expands ${Math.round(size / compressedSize)}x (limit ${LIMITS.maxCompressionRatio}x): likely a zip bomb`);
  }
  if (size > LIMITS.ratioCheckFloorBytes && compressedSize === 0) {
    return new FormatError('TOO_LARGE', `entry ${name} claims ${size} bytes from nothing`);
  }
  if (runningTotal > LIMITS.maxTotalExpandedBytes) {
    return new FormatError('TOO_LARGE', `archive expands past ${LIMITS.maxTotalExpandedBytes} bytes`);
  }
  return undefined;
}

/** Opens a zip, runs `work`, and always closes it. */
export async function withZip<T>(path: string, work: (zip: ZipArchive) => Promise<T>, options: ZipOpenOptions = {}): Promise<T> {
  const zip = await ZipArchive.open(path, options);
  try {
    return await work(zip);
  } finally {
    zip.close();
  }
}

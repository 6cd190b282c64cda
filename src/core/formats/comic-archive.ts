// One bounded view over the three comic containers (ZIP, RAR, 7z): the archive kind is read from the magic bytes,
// and every backend gets the same entry-name, entry-count, bomb and read-size rules.
import { asFormatError, FormatError } from './errors.ts';
import { openFileRanges } from './file-ranges.ts';
import { LIMITS } from './limits.ts';
import type { ArchiveType } from './types.ts';
import { checkBomb } from './zip.ts';

export type ComicArchiveType = Exclude<ArchiveType, 'UNKNOWN'>;

export interface ArchiveEntry {
  name: string;
  size: number;
  compressedSize: number;
}

/** What a backend reports for each entry, before the shared rules are applied. */
export interface RawArchiveEntry extends ArchiveEntry {
  isDirectory: boolean;
  encrypted?: boolean;
}

/** The container-specific half: list everything, read one entry with a byte cap, release resources. */
export interface ArchiveBackend {
  list(): Promise<RawArchiveEntry[]>;
  /** Must never return more than `maxBytes` bytes, whatever the entry claims. */
  read(entry: RawArchiveEntry, maxBytes: number): Promise<Buffer>;
  /** At most the first `bytes` bytes of the entry, decompressing no more than that needs (when the container allows). */
  readHead?(entry: RawArchiveEntry, bytes: number): Promise<Buffer>;
  close(): Promise<void>;
}

export interface ArchiveOpenOptions {
  /** Read with blocking calls where the backend can (ZIP); see `ExtractOptions.blocking`. */
  blocking?: boolean;
}

const SIGNATURES: { type: ComicArchiveType; bytes: number[] }[] = [
  { type: 'ZIP', bytes: [0x50, 0x4b, 0x03, 0x04] },
  { type: 'ZIP', bytes: [0x50, 0x4b, 0x05, 0x06] },
  { type: 'RAR', bytes: [0x52, 0x61, 0x72, 0x21, 0x1a, 0x07, 0x00] },
  { type: 'RAR', bytes: [0x52, 0x61, 0x72, 0x21, 0x1a, 0x07, 0x01, 0x00] },
  { type: 'SEVEN_ZIP', bytes: [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c] },
];
const LONGEST_SIGNATURE = Math.max(...SIGNATURES.map((s) => s.bytes.length));

/** The file's size and first bytes, blocking or through the thread pool. */
async function readHead(path: string, blocking: boolean): Promise<{ head: Buffer; fileSize: number }> {
  const ranges = await openFileRanges(path, blocking);
  try {
    return { fileSize: ranges.size, head: await ranges.read(0, Math.min(LONGEST_SIGNATURE, ranges.size)) };
  } finally {
    ranges.close();
  }
}

/** The container kind from the first bytes of the file; the extension is not trusted (many `.cbr` are zips). */
export async function detectArchiveType(path: string, options: ArchiveOpenOptions = {}): Promise<ComicArchiveType> {
  let head: Buffer;
  let fileSize: number;
  try {
    ({ head, fileSize } = await readHead(path, options.blocking ?? false));
  } catch (error) {
    throw asFormatError(error, 'IO');
  }
  if (fileSize === 0) throw new FormatError('EMPTY', 'the file is empty (0 bytes)');
  const match = SIGNATURES.find((s) => head.length >= s.bytes.length && s.bytes.every((b, i) => head[i] === b));
  if (!match) {
    throw new FormatError('CORRUPT', `not a ZIP, RAR or 7z archive (file starts with ${head.toString('hex') || 'nothing'})`);
  }
  return match.type;
}

/**
 * True when extracting the name could escape the target folder: `..` segments, absolute paths, drive letters, NUL.
 * Backslashes count as separators because Windows-made archives use them.
 */
export function isUnsafeEntryName(name: string): boolean {
  if (name.includes('\0')) return true;
  const normalized = name.replace(/\\/g, '/');
  if (normalized.startsWith('/')) return true;
  if (/^[A-Za-z]:/.test(normalized)) return true;
  return normalized.split('/').some((segment) => segment === '..');
}

export class ComicArchive {
  readonly type: ComicArchiveType;
  private readonly backend: ArchiveBackend;
  private entries: RawArchiveEntry[] | undefined;
  private byName: Map<string, RawArchiveEntry> | undefined;

  constructor(type: ComicArchiveType, backend: ArchiveBackend) {
    this.type = type;
    this.backend = backend;
  }

  /** File entries (no directories), after refusing unsafe names, too many entries and bomb-like sizes. */
  async list(): Promise<ArchiveEntry[]> {
    return (await this.validatedEntries()).map(({ name, size, compressedSize }) => ({ name, size, compressedSize }));
  }

  /** One entry's bytes, refusing more than `maxBytes` whether the header admits it or the data only reveals it. */
  async read(name: string, maxBytes: number = LIMITS.maxEntryBytes): Promise<Buffer> {
    const entry = await this.entry(name);
    if (entry.size > maxBytes) {
      throw new FormatError('TOO_LARGE', `entry ${name} is ${entry.size} bytes (limit ${maxBytes})`);
    }
    try {
      return await this.backend.read(entry, maxBytes);
    } catch (error) {
      throw asFormatError(error);
    }
  }

  /**
   * The first `bytes` bytes of an entry (all of it when shorter): an image's header without its picture. ZIP inflates
   * only that much; RAR and 7z extract the entry (within the usual size cap) and keep its start.
   */
  async readHead(name: string, bytes: number): Promise<Buffer> {
    const entry = await this.entry(name);
    try {
      if (this.backend.readHead) return await this.backend.readHead(entry, bytes);
      if (entry.size > LIMITS.maxEntryBytes) throw new FormatError('TOO_LARGE', `entry ${name} is ${entry.size} bytes (limit ${LIMITS.maxEntryBytes})`);
      return (await this.backend.read(entry, LIMITS.maxEntryBytes)).subarray(0, bytes);
    } catch (error) {
      throw asFormatError(error);
    }
  }

  private async entry(name: string): Promise<RawArchiveEntry> {
    await this.validatedEntries();
    const entry = this.byName?.get(name);
    if (!entry) throw new FormatError('CORRUPT', `archive entry not found: ${name}`);
    if (entry.encrypted) throw new FormatError('UNSUPPORTED', `entry ${name} is encrypted`);
    return entry;
  }

  async close(): Promise<void> {
    await this.backend.close();
  }

  private async validatedEntries(): Promise<RawArchiveEntry[]> {
    if (this.entries) return this.entries;
    let raw: RawArchiveEntry[];
    try {
      raw = await this.backend.list();
    } catch (error) {
      throw asFormatError(error);
    }
    if (raw.length > LIMITS.maxEntries) {
      throw new FormatError('TOO_LARGE', `archive has ${raw.length} entries (limit ${LIMITS.maxEntries})`);
    }
    let total = 0;
    for (const entry of raw) {
      if (isUnsafeEntryName(entry.name)) throw new FormatError('UNSAFE', `unsafe archive entry name: ${JSON.stringify(entry.name)}`);
      total += entry.size;
      const bomb = checkBomb(entry.name, entry.size, entry.compressedSize, total);
      if (bomb) throw bomb;
    }
    this.entries = raw.filter((e) => !e.isDirectory);
    // Looked up by name for every page read: a list search would make reading all pages quadratic.
    this.byName = new Map();
    for (const entry of this.entries) if (!this.byName.has(entry.name)) this.byName.set(entry.name, entry);
    return this.entries;
  }
}

/** Opens a comic archive of whichever kind the magic bytes say. */
export async function openComicArchive(path: string, options: ArchiveOpenOptions = {}): Promise<ComicArchive> {
  const type = await detectArchiveType(path, options);
  // Backends load on first use: unrar's WebAssembly and the 7-Zip binary lookup cost memory a ZIP-only library never needs.
  const backend =
    type === 'ZIP'
      ? await (await import('./comic-zip.ts')).openZipBackend(path, options)
      : type === 'RAR'
        ? await (await import('./comic-rar.ts')).openRarBackend(path)
        : await (await import('./comic-7z.ts')).openSevenZipBackend(path);
  return new ComicArchive(type, backend);
}

/** Opens a comic archive, runs `work`, and always releases the archive. */
export async function withComicArchive<T>(path: string, work: (archive: ComicArchive) => Promise<T>, options: ArchiveOpenOptions = {}): Promise<T> {
  const archive = await openComicArchive(path, options);
  try {
    return await work(archive);
  } finally {
    await archive.close();
  }
}

// Read-only, bounded access to ZIP containers (EPUB, CBZ, zipped FB2) without inflating whole books.
import yauzl from 'yauzl';
import { FormatError } from './errors.ts';
import { LIMITS } from './limits.ts';

export interface ZipEntryInfo {
  name: string;
  size: number;
  compressedSize: number;
  isDirectory: boolean;
}

const UNSAFE_NAME = /^(invalid characters in fileName|absolute path|invalid relative path)/;

function openZip(path: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.open(path, { lazyEntries: true, autoClose: false, validateEntrySizes: true }, (err, zip) => {
      if (err || !zip) reject(err ?? new Error('cannot open zip'));
      else resolve(zip);
    });
  });
}

function toFormatError(error: unknown): FormatError {
  if (error instanceof FormatError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (UNSAFE_NAME.test(message)) return new FormatError('UNSAFE', `unsafe archive entry name (${message})`);
  const code = (error as NodeJS.ErrnoException)?.code;
  if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR') return new FormatError('IO', message);
  return new FormatError('CORRUPT', `not a readable zip archive: ${message}`);
}

export class ZipArchive {
  readonly entries: ZipEntryInfo[];
  private readonly zip: yauzl.ZipFile;
  private readonly byName: Map<string, yauzl.Entry>;

  private constructor(zip: yauzl.ZipFile, entries: yauzl.Entry[]) {
    this.zip = zip;
    this.byName = new Map(entries.map((e) => [e.fileName, e]));
    this.entries = entries.map((e) => ({
      name: e.fileName,
      size: e.uncompressedSize,
      compressedSize: e.compressedSize,
      isDirectory: e.fileName.endsWith('/'),
    }));
  }

  /** Opens and indexes the central directory; refuses unsafe names, bombs and absurd entry counts. */
  static async open(path: string): Promise<ZipArchive> {
    let zip: yauzl.ZipFile | undefined;
    try {
      zip = await openZip(path);
      const opened = zip;
      if (opened.entryCount > LIMITS.maxEntries) {
        throw new FormatError('TOO_LARGE', `archive has ${opened.entryCount} entries (limit ${LIMITS.maxEntries})`);
      }
      const entries = await new Promise<yauzl.Entry[]>((resolve, reject) => {
        const list: yauzl.Entry[] = [];
        let total = 0;
        opened.on('entry', (entry: yauzl.Entry) => {
          total += entry.uncompressedSize;
          const bomb = checkBomb(entry.fileName, entry.uncompressedSize, entry.compressedSize, total);
          if (bomb) {
            reject(bomb);
            return;
          }
          list.push(entry);
          opened.readEntry();
        });
        opened.on('end', () => resolve(list));
        opened.on('error', reject);
        opened.readEntry();
      });
      return new ZipArchive(opened, entries);
    } catch (error) {
      zip?.close();
      throw toFormatError(error);
    }
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** Finds an entry by name, ignoring case (OPF hrefs and ComicInfo.xml are often cased loosely). */
  find(name: string): ZipEntryInfo | undefined {
    const exact = this.entries.find((e) => e.name === name);
    if (exact) return exact;
    const lower = name.toLowerCase();
    return this.entries.find((e) => e.name.toLowerCase() === lower);
  }

  /** Inflates one entry into memory, refusing more than `maxBytes` whatever the header claims. */
  async read(name: string, maxBytes: number = LIMITS.maxEntryBytes): Promise<Buffer> {
    const entry = this.byName.get(name);
    if (!entry) throw new FormatError('CORRUPT', `archive entry not found: ${name}`);
    if (entry.uncompressedSize > maxBytes) {
      throw new FormatError('TOO_LARGE', `entry ${name} is ${entry.uncompressedSize} bytes (limit ${maxBytes})`);
    }
    try {
      const stream = await new Promise<NodeJS.ReadableStream>((resolve, reject) => {
        this.zip.openReadStream(entry, (err, s) => (err || !s ? reject(err ?? new Error('no stream')) : resolve(s)));
      });
      const chunks: Buffer[] = [];
      let length = 0;
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        length += chunk.length;
        if (length > maxBytes) {
          (stream as unknown as { destroy(): void }).destroy();
          throw new FormatError('TOO_LARGE', `entry ${name} inflates past ${maxBytes} bytes`);
        }
        chunks.push(chunk);
      }
      return Buffer.concat(chunks, length);
    } catch (error) {
      throw toFormatError(error);
    }
  }

  async readText(name: string, maxBytes: number = LIMITS.maxXmlBytes): Promise<string> {
    return (await this.read(name, maxBytes)).toString('utf8');
  }

  close(): void {
    this.zip.close();
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
export async function withZip<T>(path: string, work: (zip: ZipArchive) => Promise<T>): Promise<T> {
  const zip = await ZipArchive.open(path);
  try {
    return await work(zip);
  } finally {
    zip.close();
  }
}

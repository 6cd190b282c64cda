// CBR backend: RAR 4 and RAR 5 through node-unrar-js (the official unrar compiled to WebAssembly).
//
// The package's own file extractor writes every extracted entry to disk under a name taken from the archive, and
// its in-memory extractor needs the whole archive as one ArrayBuffer. Neither fits hostile, book-sized input, so
// this backend plugs its own I/O into the package's Extractor base class: the archive is read from disk in the
// chunks unrar asks for, and the one entry being extracted is collected in memory up to a byte cap. Nothing is
// ever written to disk, and the archive is never held in memory.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { Extractor, UnrarError } from 'node-unrar-js';
import type { SeekMethod } from 'node-unrar-js/dist/js/Extractor.js';
import { getUnrar } from 'node-unrar-js/dist/js/unrar.singleton.js';
import type { ArchiveBackend, RawArchiveEntry } from './comic-archive.ts';
import { FormatError, asFormatError } from './errors.ts';
import { LIMITS } from './limits.ts';

/** Sizes past 2^53 (unrar's "size unknown" marker is near 2^63) are clamped so the bomb rules still refuse them. */
const UNKNOWN_SIZE = 2 ** 53;

interface ReadCursor {
  position: number;
}

interface Sink {
  chunks: Buffer[];
  length: number;
  limit: number;
  overflowed: boolean;
}

class BoundedRarReader extends Extractor {
  protected _filePath: string;
  private readonly fd: number;
  private readonly fileSize: number;
  private readonly cursors = new Map<number, ReadCursor>();
  private nextHandle = 1;
  private sink: Sink | undefined;
  private sinkHandle = 0;
  private scratch = Buffer.alloc(0);
  private ioError: unknown;
  private shortRead = false;

  constructor(unrar: unknown, path: string, fd: number, fileSize: number) {
    super(unrar);
    this._filePath = path;
    this.fd = fd;
    this.fileSize = fileSize;
  }

  /** Every header, read in one synchronous pass (the wasm module talks to whichever reader it was last given). */
  listHeaders(): RawArchiveEntry[] {
    return this.run(() => {
      const list = this.getFileList();
      const entries: RawArchiveEntry[] = [];
      let count = 0;
      // The header iterator must run to its end, or unrar's archive object is never freed; past the cap it is
      // drained without keeping anything.
      for (const header of list.fileHeaders) {
        count += 1;
        if (count > LIMITS.maxEntries + 1) continue;
        entries.push({
          name: header.name,
          size: header.unpSize >= UNKNOWN_SIZE ? Number.MAX_SAFE_INTEGER : header.unpSize,
          compressedSize: header.packSize,
          isDirectory: header.flags.directory,
          encrypted: header.flags.encrypted,
        });
      }
      // unrar ends a listing quietly when a header is cut short; headers are read with exact sizes, so a short
      // read while listing means the file stops in the middle of one.
      if (this.shortRead) throw new FormatError('CORRUPT', 'RAR archive is truncated (a header is cut short)');
      if (list.arcHeader.flags.volume) throw new FormatError('UNSUPPORTED', 'multi-volume RAR archives are not supported');
      return entries;
    });
  }

  /** Extracts one entry into memory; unrar stops at the declared size, and the sink refuses anything past `limit`. */
  extractOne(name: string, limit: number): Buffer {
    return this.run(() => {
      const sink: Sink = { chunks: [], length: 0, limit, overflowed: false };
      this.sink = sink;
      try {
        const found = [...this.extract({ files: [name] }).files];
        if (sink.overflowed) throw new FormatError('TOO_LARGE', `entry ${name} inflates past ${limit} bytes`);
        if (found.length === 0) throw new FormatError('CORRUPT', `archive entry not found: ${name}`);
        return Buffer.concat(sink.chunks, sink.length);
      } finally {
        this.sink = undefined;
      }
    });
  }

  dispose(): void {
    closeSync(this.fd);
  }

  private run<T>(work: () => T): T {
    this.unrar.extractor = this;
    this.ioError = undefined;
    this.shortRead = false;
    let result: T;
    try {
      result = work();
    } catch (error) {
      if (this.ioError) throw asFormatError(this.ioError, 'IO');
      throw toFormatError(error);
    }
    // A failed read may also just look like the end of the archive to unrar.
    if (this.ioError) throw asFormatError(this.ioError, 'IO');
    return result;
  }

  protected open(filename: string): number {
    // Only the archive itself; unrar asks for sibling files when an archive claims to continue in another volume.
    if (filename !== this._filePath) return 0;
    const handle = this.nextHandle++;
    this.cursors.set(handle, { position: 0 });
    return handle;
  }

  protected create(_filename: string): number {
    this.sinkHandle = this.nextHandle++;
    return this.sinkHandle;
  }

  protected closeFile(handle: number): void {
    this.cursors.delete(handle);
  }

  protected read(handle: number, pointer: number, size: number): number {
    const cursor = this.cursors.get(handle);
    if (!cursor) return -1;
    try {
      if (this.scratch.length < size) this.scratch = Buffer.alloc(size);
      const bytesRead = readSync(this.fd, this.scratch, 0, size, cursor.position);
      this.unrar.HEAPU8.set(this.scratch.subarray(0, bytesRead), pointer);
      if (bytesRead > 0 && bytesRead < size) this.shortRead = true;
      cursor.position += bytesRead;
      return bytesRead;
    } catch (error) {
      // Throwing through the wasm frames would leak unrar's state; report a failed read and surface it afterwards.
      this.ioError = error;
      return -1;
    }
  }

  protected write(handle: number, pointer: number, size: number): boolean {
    const sink = this.sink;
    if (!sink || handle !== this.sinkHandle) return false;
    if (sink.overflowed || sink.length + size > sink.limit) {
      sink.overflowed = true;
      return false;
    }
    sink.chunks.push(Buffer.from(this.unrar.HEAPU8.subarray(pointer, pointer + size)));
    sink.length += size;
    return true;
  }

  protected tell(handle: number): number {
    return this.cursors.get(handle)?.position ?? -1;
  }

  protected seek(handle: number, offset: number, method: SeekMethod): boolean {
    const cursor = this.cursors.get(handle);
    if (!cursor) return false;
    const base = method === 'SET' ? 0 : method === 'END' ? this.fileSize : cursor.position;
    const position = base + offset;
    if (position < 0 || position > this.fileSize) return false;
    cursor.position = position;
    return true;
  }
}

function toFormatError(error: unknown): FormatError {
  if (error instanceof FormatError) return error;
  if (error instanceof UnrarError) {
    // A header cut short yields a half-decoded name; keep only its printable part.
    const entryName = error.file?.replace(/\p{C}/gu, '');
    const where = entryName ? ` (entry ${entryName})` : '';
    switch (error.reason) {
      case 'ERAR_MISSING_PASSWORD':
      case 'ERAR_BAD_PASSWORD':
        return new FormatError('UNSUPPORTED', `encrypted RAR archive${where}`, { cause: error });
      case 'ERAR_UNKNOWN_FORMAT':
      case 'ERAR_EREFERENCE':
        return new FormatError('UNSUPPORTED', `unsupported RAR variant: ${error.message}${where}`, { cause: error });
      case 'ERAR_NO_MEMORY':
        return new FormatError('TOO_LARGE', `RAR archive needs more memory than allowed${where}`, { cause: error });
      default:
        return new FormatError('CORRUPT', `damaged RAR archive: ${error.message}${where}`, { cause: error });
    }
  }
  return asFormatError(error);
}

const GLUE_EVENTS = ['uncaughtException', 'unhandledRejection'] as const;
let unrarModule: Promise<unknown> | undefined;

/**
 * Loads the wasm module once per process (or worker). Its Emscripten glue installs process-wide
 * `uncaughtException` and `unhandledRejection` listeners that rethrow; how the server treats those is not a
 * library's decision, so the listeners it added are removed again.
 */
function loadUnrar(): Promise<unknown> {
  unrarModule ??= (async () => {
    const before = new Map(GLUE_EVENTS.map((event) => [event, new Set<unknown>(process.listeners(event))]));
    try {
      return (await getUnrar()) as unknown;
    } catch (error) {
      unrarModule = undefined;
      throw error;
    } finally {
      for (const event of GLUE_EVENTS) {
        for (const listener of process.listeners(event)) {
          const added = !before.get(event)?.has(listener);
          if (added && /ExitStatus|throw reason/.test(String(listener))) process.removeListener(event, listener);
        }
      }
    }
  })();
  return unrarModule;
}

export async function openRarBackend(path: string): Promise<ArchiveBackend> {
  const unrar = await loadUnrar();
  let fd: number | undefined;
  let fileSize: number;
  try {
    fd = openSync(path, 'r');
    fileSize = fstatSync(fd).size;
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    throw asFormatError(error, 'IO');
  }
  const reader = new BoundedRarReader(unrar, path, fd, fileSize);
  return {
    list: async () => reader.listHeaders(),
    read: async (entry, maxBytes) => reader.extractOne(entry.name, maxBytes),
    close: async () => reader.dispose(),
  };
}

// Opens PDFs with pdf.js without holding the file in memory: pdf.js asks for byte ranges and we read just those.
import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as PdfJsModule from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { FormatError } from './errors.ts';
import { LIMITS } from './limits.ts';

type PdfJs = typeof PdfJsModule;

const PDFJS_ENTRY = 'pdfjs-dist/legacy/build/pdf.mjs';
const RANGE_CHUNK_BYTES = 256 * 1024;

let pdfjsLoading: Promise<PdfJs> | undefined;

/** pdf.js costs ~100 ms to load, so it is imported on the first PDF rather than when the CLI starts. */
export function loadPdfJs(): Promise<PdfJs> {
  pdfjsLoading ??= import(PDFJS_ENTRY).catch((error: unknown) => {
    pdfjsLoading = undefined;
    throw new FormatError('IO', `pdf.js could not be loaded: ${error instanceof Error ? error.message : String(error)}`);
  }) as Promise<PdfJs>;
  return pdfjsLoading;
}

/** Folders of data files shipped with pdfjs-dist (fonts for non-embedded standard fonts, CJK cmaps, decoders). */
function resourceFolders(): Record<'standardFontDataUrl' | 'cMapUrl' | 'wasmUrl' | 'iccUrl', string> {
  const root = join(dirname(fileURLToPath(import.meta.resolve(PDFJS_ENTRY))), '..', '..', '..');
  const folder = (name: string): string => join(root, name) + '/';
  return {
    standardFontDataUrl: folder('standard_fonts'),
    cMapUrl: folder('cmaps'),
    wasmUrl: folder('wasm'),
    iccUrl: folder('iccs'),
  };
}

export interface OpenedPdf {
  document: PDFDocumentProxy;
  /**
   * Waits for `work` on the document, failing if it outlasts `timeoutMs` or if reading the file fails meanwhile
   * (pdf.js itself would wait forever for a range that never arrives).
   */
  guard<T>(work: Promise<T>, timeoutMs: number, what: string): Promise<T>;
  /** Releases pdf.js's copy of the document and the file handle; safe to call twice. */
  close(): Promise<void>;
}

/** Races `work` against a timer so a stalled parse becomes an error instead of a hung scan. */
export async function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  const late = (): FormatError => new FormatError('CORRUPT', `${what} did not finish within ${ms} ms`);
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(late()), ms);
  });
  try {
    const done = await Promise.race([work, timeout]);
    // On a busy event loop the timer can run after work that finished late: the time limit holds all the same.
    if (performance.now() - started > ms) throw late();
    return done;
  } finally {
    clearTimeout(timer);
  }
}

export interface OpenPdfOptions {
  /** Opening (and, for a damaged file, repairing) must finish within this time. */
  timeoutMs: number;
  /** Largest damaged PDF read whole into memory for pdf.js to repair, and largest single range handed over. */
  maxInMemoryBytes: number;
  /** Observes every range read from disk (tests use it to show that the whole file is not read). */
  onRead?: (begin: number, bytes: number) => void;
}

/** `startxref` normally sits in the last few hundred bytes; a generous window still costs one small read. */
const TAIL_WINDOW = 64 * 1024;
/** After giving up on a document, how long pdf.js gets to wind down before it is torn down regardless. */
const SETTLE_MS = 2000;

/**
 * Opens the PDF at `path` (already known to be `size` bytes).
 *
 * A PDF whose trailer points at a cross-reference section is read through ranges: pdf.js asks for the trailer, the
 * xref and the objects it needs, and only those are read (its chunk cache reserves address space for the whole file,
 * but memory is committed only for what arrives). A PDF without a sound trailer is truncated or damaged; pdf.js must
 * then scan all of it, which through ranges restarts its search on every missing chunk (quadratic), so such files are
 * read whole into memory, up to `maxInMemoryBytes`, and refused beyond that.
 */
export async function openPdf(path: string, size: number, options: OpenPdfOptions): Promise<OpenedPdf> {
  const pdfjs = await loadPdfJs();
  const handle = await open(path, 'r');
  let source: Parameters<PdfJs['getDocument']>[0];
  let transport: ClosableTransport | undefined;
  const readFailure = Promise.withResolvers<never>();
  // Observed here so that a failure nobody is waiting on is not an unhandled rejection.
  readFailure.promise.catch(() => undefined);

  try {
    if (await hasSoundTrailer(handle, size)) {
      const range = createFileRangeTransport(pdfjs, handle, size, options, (error) => readFailure.reject(error));
      transport = range;
      source = { range, rangeChunkSize: RANGE_CHUNK_BYTES, disableAutoFetch: true, disableStream: true };
    } else if (size <= options.maxInMemoryBytes) {
      const data = new Uint8Array(size);
      const { bytesRead } = await handle.read(data, 0, size, 0);
      options.onRead?.(0, bytesRead);
      source = { data: data.subarray(0, bytesRead) };
    } else {
      throw new FormatError(
        'CORRUPT',
        `the PDF's trailer does not point at a cross-reference table (truncated or damaged), ` +
          `and at ${size} bytes it is too large to repair in memory`,
      );
    }
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }

  const loading = pdfjs.getDocument({
    ...source,
    // pdf.js 6 no longer compiles PostScript functions with eval, so there is no isEvalSupported switch to turn off.
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
    enableXfa: false,
    verbosity: 0,
    maxImageSize: LIMITS.maxImagePixels,
    ...resourceFolders(),
  });
  const loaded = loading.promise.then(
    () => undefined,
    () => undefined,
  );

  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    // pdf.js throws an unhandled rejection if it is torn down while still opening the document, so first fail every
    // read it waits for and let the opening finish (with an error), then destroy it.
    transport?.failPending();
    await Promise.race([loaded, new Promise((resolve) => setTimeout(resolve, SETTLE_MS).unref())]);
    await loading.destroy().catch(() => undefined);
    await handle.close().catch(() => undefined);
  };

  const guard = <T>(work: Promise<T>, timeoutMs: number, what: string): Promise<T> =>
    withTimeout(Promise.race([work, readFailure.promise]), timeoutMs, what);

  try {
    const document = await guard(loading.promise, options.timeoutMs, 'Opening the PDF');
    return { document, guard, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** True when the last `startxref` in the tail points at an `xref` table or an object (a cross-reference stream). */
async function hasSoundTrailer(handle: FileHandle, size: number): Promise<boolean> {
  const length = Math.min(size, TAIL_WINDOW);
  const tail = Buffer.alloc(length);
  const { bytesRead } = await handle.read(tail, 0, length, size - length);
  const text = tail.subarray(0, bytesRead).toString('latin1');
  const at = text.lastIndexOf('startxref');
  const offset = at === -1 ? NaN : Number(/^startxref\s+(\d+)/.exec(text.slice(at))?.[1]);
  if (!Number.isSafeInteger(offset) || offset >= size) return false;
  const target = Buffer.alloc(64);
  const read = await handle.read(target, 0, target.length, offset);
  return /^\s*(xref|\d+\s+\d+\s+obj)/.test(target.subarray(0, read.bytesRead).toString('latin1'));
}

interface ClosableTransport {
  /** Answers every outstanding read with a failure and ignores the answers still on their way from disk. */
  failPending(): void;
}

function createFileRangeTransport(
  pdfjs: PdfJs,
  handle: FileHandle,
  size: number,
  options: OpenPdfOptions,
  onReadError: (error: unknown) => void,
): InstanceType<PdfJs['PDFDataRangeTransport']> & ClosableTransport {
  class FileRange extends pdfjs.PDFDataRangeTransport implements ClosableTransport {
    #open = true;
    readonly #pending = new Set<number>();

    failPending(): void {
      this.#open = false;
      for (const begin of [...this.#pending]) this.#deliverFailure(begin);
    }

    override requestDataRange(begin: number, end: number): void {
      const length = Math.max(0, Math.min(end, size) - begin);
      this.#pending.add(begin);
      if (!this.#open) {
        this.#deliverFailure(begin);
        return;
      }
      if (length > options.maxInMemoryBytes) {
        onReadError(
          new FormatError(
            'TOO_LARGE',
            `pdf.js asked for ${length} bytes at once (usually a damaged cross-reference table being rebuilt), ` +
              `more than the ${options.maxInMemoryBytes} allowed`,
          ),
        );
        this.#deliverFailure(begin);
        return;
      }
      const chunk = new Uint8Array(length);
      handle
        .read(chunk, 0, length, begin)
        .then(({ bytesRead }) => {
          options.onRead?.(begin, bytesRead);
          // A file that shrank since we stat'ed it: hand over what is there, pdf.js reports the damage.
          this.#deliver(begin, bytesRead === length ? chunk : chunk.subarray(0, bytesRead));
        })
        .catch((error: unknown) => {
          onReadError(error);
          this.#deliverFailure(begin);
        });
    }

    /**
     * pdf.js has no way to fail a range request; a one-byte answer for a chunk-sized request is the one it rejects
     * ("bad end offset"), which ends the waiting operation with an error instead of leaving it pending.
     */
    #deliverFailure(begin: number): void {
      this.#deliver(begin, new Uint8Array(1));
    }

    #deliver(begin: number, chunk: Uint8Array): void {
      if (!this.#pending.delete(begin)) return;
      try {
        this.onDataRange(begin, chunk);
      } catch {
        // The request was cancelled meanwhile; nobody is waiting for this answer.
      }
    }
  }
  return new FileRange(size, null);
}

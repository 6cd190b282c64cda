// A random-access tokenizer for music-metadata over a file read with blocking calls, for scan worker threads.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { AbstractTokenizer, EndOfStreamError, type IRandomAccessFileInfo, type IReadChunkOptions } from 'strtok3';

/**
 * music-metadata reads a file a few bytes at a time (a box header, a frame header, a tag field): through the thread
 * pool that was a round trip each, several times the cost of the parsing itself. Here every read is served from a
 * window of the file read ahead with one blocking call; a read larger than the window goes straight to the file.
 */
const WINDOW_BYTES = 16 * 1024;

export class BlockingFileTokenizer extends AbstractTokenizer {
  readonly fileInfo: IRandomAccessFileInfo;
  private readonly fd: number;
  private window: Buffer | undefined;
  private windowStart = 0;
  private windowBytes = 0;

  /** Opens `path`; the caller closes the tokenizer when done. */
  constructor(path: string) {
    super();
    this.fd = openSync(path, 'r');
    try {
      this.fileInfo = { path, size: fstatSync(this.fd).size };
    } catch (error) {
      closeSync(this.fd);
      throw error;
    }
  }

  supportsRandomAccess(): boolean {
    return true;
  }

  setPosition(position: number): void {
    this.validateLength(position, 'position');
    this.position = position;
  }

  readBuffer(target: Uint8Array, options?: IReadChunkOptions): Promise<number> {
    return this.settle(() => {
      const request = this.normalizeOptions(target, options);
      const bytes = this.readAt(target, request.length, request.position, request.mayBeLess);
      this.position = request.position + bytes;
      return bytes;
    });
  }

  peekBuffer(target: Uint8Array, options?: IReadChunkOptions): Promise<number> {
    return this.settle(() => {
      const request = this.normalizeOptions(target, options);
      return this.readAt(target, request.length, request.position, request.mayBeLess);
    });
  }

  protected override async closeOnce(): Promise<void> {
    closeSync(this.fd);
    this.window = undefined;
    await super.closeOnce();
  }

  /** A promise of what `read` returns, or of what it throws (callers of a tokenizer only ever await). */
  private settle(read: () => number): Promise<number> {
    try {
      return Promise.resolve(read());
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /** Fills `target` from `position`; fewer bytes only at the end of the file, and then only when `mayBeLess`. */
  private readAt(target: Uint8Array, length: number, position: number, mayBeLess: boolean | undefined): number {
    let done = 0;
    while (done < length) {
      const got = this.readOnce(target, done, length - done, position + done);
      if (got === 0) break;
      done += got;
    }
    if (done < length && !mayBeLess) throw new EndOfStreamError();
    return done;
  }

  private readOnce(target: Uint8Array, offset: number, length: number, position: number): number {
    if (length > WINDOW_BYTES) return readSync(this.fd, target, offset, length, position);
    if (position < this.windowStart || position + length > this.windowStart + this.windowBytes) {
      this.window ??= Buffer.allocUnsafe(WINDOW_BYTES);
      this.windowStart = position;
      this.windowBytes = readSync(this.fd, this.window, 0, WINDOW_BYTES, position);
    }
    const from = position - this.windowStart;
    const bytes = Math.min(length, this.windowBytes - from);
    if (bytes <= 0) return 0;
    (this.window as Buffer).copy(target, offset, from, from + bytes);
    return bytes;
  }
}

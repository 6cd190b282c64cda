// A minimal POSIX tar (pax) writer and reader for Bindery's archives: regular files only, every member preceded by a
// pax header carrying its path, size and SHA-256, so a reader checks each member as it streams past and long paths
// or files over 8 GiB need no special case. Standard tools read the archives (GNU tar notes the vendor keyword).
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import type { Writable } from 'node:stream';

const BLOCK = 512;
/** Largest pax extended header read (ours hold a path and a checksum: well under a kilobyte). */
const MAX_PAX_BYTES = 1024 * 1024;
const ZEROS = Buffer.alloc(BLOCK * 2);
export const SHA256_KEYWORD = 'BINDERY.sha256';

export class TarFormatError extends Error {
  override name = 'TarFormatError';
}

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0');
}

function header(name: string, size: number, type: '0' | 'x', mtime: number): Buffer {
  const block = Buffer.alloc(BLOCK);
  block.write(name.slice(0, 99), 0, 'utf8');
  block.write(octal(0o644, 8), 100);
  block.write(octal(0, 8), 108);
  block.write(octal(0, 8), 116);
  // Sizes over the 11-digit octal field travel in the pax header; the field then holds its maximum.
  block.write(octal(Math.min(size, 0o77777777777), 12), 124);
  block.write(octal(Math.floor(mtime), 12), 136);
  block.write(type, 156);
  block.write('ustar\u0000', 257, 'latin1');
  block.write('00', 263, 'latin1');
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${octal(sum, 7)}\u0000 `, 148, 'latin1');
  return block;
}

function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body) + 1;
  while (String(length).length + Buffer.byteLength(body) !== length) length = String(length).length + Buffer.byteLength(body);
  return `${length}${body}`;
}

function padding(size: number): Buffer {
  const rest = size % BLOCK;
  return rest === 0 ? Buffer.alloc(0) : ZEROS.subarray(0, BLOCK - rest);
}

export interface TarMember {
  path: string;
  size: number;
  sha256: string;
  mtimeMs?: number;
}

/** Writes members to a stream, waiting whenever the stream asks to (memory stays bounded by one chunk). */
export class TarWriter {
  private readonly out: Writable;

  constructor(out: Writable) {
    this.out = out;
  }

  private async write(chunk: Buffer): Promise<void> {
    if (chunk.length === 0) return;
    if (!this.out.write(chunk)) await once(this.out, 'drain');
  }

  /** One member; `body` must yield exactly `member.size` bytes (its digest was taken beforehand). */
  async add(member: TarMember, body: Buffer | AsyncIterable<Buffer>): Promise<void> {
    const mtime = (member.mtimeMs ?? Date.now()) / 1000;
    const pax = Buffer.from(paxRecord('path', member.path) + paxRecord('size', String(member.size)) + paxRecord(SHA256_KEYWORD, member.sha256));
    await this.write(header('PaxHeader', pax.length, 'x', mtime));
    await this.write(pax);
    await this.write(padding(pax.length));
    await this.write(header(member.path, member.size, '0', mtime));
    let written = 0;
    for await (const chunk of Buffer.isBuffer(body) ? [body] : body) {
      written += chunk.length;
      if (written > member.size) throw new TarFormatError(`${member.path} grew while it was archived`);
      await this.write(chunk);
    }
    if (written !== member.size) throw new TarFormatError(`${member.path} shrank while it was archived (${written} of ${member.size} bytes)`);
    await this.write(padding(member.size));
  }

  /** The two zero blocks that end an archive. */
  async finish(): Promise<void> {
    await this.write(ZEROS);
  }
}

/** Reads exact byte counts from a stream of chunks. */
class ByteReader {
  private readonly source: AsyncIterator<Buffer>;
  private pending: Buffer = Buffer.alloc(0);
  consumed = 0;

  constructor(source: AsyncIterable<Buffer>) {
    this.source = source[Symbol.asyncIterator]();
  }

  private async fill(): Promise<boolean> {
    const next = await this.source.next();
    if (next.done) return false;
    this.pending = this.pending.length === 0 ? next.value : Buffer.concat([this.pending, next.value]);
    return true;
  }

  /** Exactly `n` bytes, or fewer only at the end of the stream. */
  async take(n: number): Promise<Buffer> {
    while (this.pending.length < n) if (!(await this.fill())) break;
    const out = this.pending.subarray(0, n);
    this.pending = this.pending.subarray(out.length);
    this.consumed += out.length;
    return out;
  }

  /** Reads the stream to its end (so a compressed source checks its trailer). */
  async drain(): Promise<void> {
    this.pending = Buffer.alloc(0);
    while (await this.fill()) this.pending = Buffer.alloc(0);
  }

  /** `n` bytes as they arrive; fails when the stream ends first. */
  async *stream(n: number, what: string): AsyncGenerator<Buffer> {
    let left = n;
    while (left > 0) {
      if (this.pending.length === 0 && !(await this.fill())) throw new TarFormatError(`the archive is cut short inside ${what}`);
      const part = this.pending.subarray(0, Math.min(left, this.pending.length));
      this.pending = this.pending.subarray(part.length);
      this.consumed += part.length;
      left -= part.length;
      yield part;
    }
  }
}

function parsePax(data: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    const length = Number(data.toString('latin1', at, space));
    if (space < 0 || !Number.isInteger(length) || length <= 0 || at + length > data.length) throw new TarFormatError('malformed pax header');
    const record = data.toString('utf8', space + 1, at + length - 1);
    const eq = record.indexOf('=');
    if (eq < 0) throw new TarFormatError('malformed pax header');
    out[record.slice(0, eq)] = record.slice(eq + 1);
    at += length;
  }
  return out;
}

function checkHeader(block: Buffer): void {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : (block[i] as number);
  const stored = parseInt(block.toString('latin1', 148, 156).replace(/\0.*$/, '').trim(), 8);
  if (stored !== sum) throw new TarFormatError('a member header is damaged (header checksum mismatch)');
}

export interface TarEntry extends TarMember {
  /** The member's bytes; must be read to the end (or `skip`ped) before the next entry. */
  body: AsyncGenerator<Buffer>;
}

/** The members of an archive, in order. Throws TarFormatError for a damaged or cut-short archive. */
export async function* readTar(source: AsyncIterable<Buffer>): AsyncGenerator<TarEntry> {
  const reader = new ByteReader(source);
  let pax: Record<string, string> = {};
  for (;;) {
    const block = await reader.take(BLOCK);
    if (block.length < BLOCK) throw new TarFormatError('the archive is cut short (no end-of-archive marker)');
    if (block.every((b) => b === 0)) {
      if ((await reader.take(BLOCK)).length < BLOCK) throw new TarFormatError('the archive is cut short (inside its end-of-archive marker)');
      await reader.drain();
      return;
    }
    checkHeader(block);
    const type = String.fromCharCode(block[156] as number);
    const headerSize = parseInt(block.toString('latin1', 124, 136).replace(/\0.*$/, '').trim() || '0', 8);
    // A pax size applies to the member that follows, never to another pax header; a pax header is read whole, so it
    // is capped (a crafted size must not exhaust memory before any checksum is checked).
    const size = type !== 'x' && pax.size !== undefined ? Number(pax.size) : headerSize;
    const padded = Math.ceil(size / BLOCK) * BLOCK;
    if (type === 'x') {
      if (!(size >= 0 && size <= MAX_PAX_BYTES)) throw new TarFormatError(`an extended header of ${size} bytes (at most ${MAX_PAX_BYTES})`);
      const data = await reader.take(padded);
      if (data.length < padded) throw new TarFormatError('the archive is cut short');
      pax = parsePax(data.subarray(0, size));
      continue;
    }
    const path = pax.path ?? block.toString('utf8', 0, 100).replace(/\0.*$/s, '');
    const sha256 = pax[SHA256_KEYWORD] ?? '';
    pax = {};
    if (type !== '0' && type !== '\0') throw new TarFormatError(`unexpected member type "${type}" for ${path}`);
    const start = reader.consumed;
    yield { path, size, sha256, body: reader.stream(size, path) };
    const unread = size - (reader.consumed - start);
    for await (const _chunk of reader.stream(unread, path)) {
      // whatever the consumer left unread
    }
    const pad = padded - size;
    if (pad > 0 && (await reader.take(pad)).length < pad) throw new TarFormatError('the archive is cut short');
  }
}

/**
 * An entry's bytes, checked against the SHA-256 its header carries once the last byte has passed (TarFormatError on a
 * mismatch). With `limit`, an entry larger than that is refused as it streams.
 */
export async function* verifiedBody(entry: TarEntry, limit = Infinity): AsyncGenerator<Buffer> {
  const hash = createHash('sha256');
  let seen = 0;
  for await (const chunk of entry.body) {
    hash.update(chunk);
    seen += chunk.length;
    if (seen > limit) throw new TarFormatError(`${entry.path} is implausibly large`);
    yield chunk;
  }
  if (seen !== entry.size) throw new TarFormatError(`the archive is cut short inside ${entry.path}`);
  if (hash.digest('hex') !== entry.sha256) throw new TarFormatError(`${entry.path} does not match its checksum: the archive was altered or damaged`);
}

/** A small entry's bytes, checked. */
export async function readVerified(entry: TarEntry, limit: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of verifiedBody(entry, limit)) parts.push(chunk);
  return Buffer.concat(parts);
}

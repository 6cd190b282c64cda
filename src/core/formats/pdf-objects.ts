// A small reader of PDF objects through the cross-reference data: tables, streams (with PNG predictors), object
// streams and incremental updates. Enough to walk to page one and read its resources and streams without pdf.js;
// anything it does not understand throws, and the caller falls back to pdf.js.
import { inflateSync } from 'node:zlib';
import { undoPngRowFilters } from './png-rows.ts';

export type PdfValue = number | boolean | null | string | PdfName | PdfRef | PdfValue[] | PdfDict;
export class PdfName {
  readonly name: string;
  constructor(name: string) {
    this.name = name;
  }
}
export class PdfRef {
  readonly num: number;
  readonly gen: number;
  constructor(num: number, gen: number) {
    this.num = num;
    this.gen = gen;
  }
}
export interface PdfDict {
  [key: string]: PdfValue;
}
export interface PdfStream {
  dict: PdfDict;
  /** The stream's bytes as stored (still filtered). */
  raw: Buffer;
}

/** Reads `length` bytes at `position` (fewer at the end of the file). */
export type ReadAt = (position: number, length: number) => Buffer | Promise<Buffer>;

const WHITE = new Set([0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]);
const DELIMITER = new Set([0x28, 0x29, 0x3c, 0x3e, 0x5b, 0x5d, 0x7b, 0x7d, 0x2f, 0x25]);

/** Tokens of PDF syntax over a buffer; `operator` is any bare word (`obj`, `R`, `stream`, content operators). */
export class PdfLexer {
  readonly bytes: Buffer;
  pos: number;
  constructor(bytes: Buffer, pos = 0) {
    this.bytes = bytes;
    this.pos = pos;
  }

  skipSpace(): void {
    const b = this.bytes;
    while (this.pos < b.length) {
      const c = b[this.pos] as number;
      if (WHITE.has(c)) this.pos++;
      else if (c === 0x25) while (this.pos < b.length && b[this.pos] !== 0x0a && b[this.pos] !== 0x0d) this.pos++;
      else break;
    }
  }

  /** The next value or operator (as `{ op }`), or undefined at the end. */
  next(): PdfValue | { op: string } | undefined {
    this.skipSpace();
    const b = this.bytes;
    if (this.pos >= b.length) return undefined;
    const c = b[this.pos] as number;
    if (c === 0x2f) {
      const start = ++this.pos;
      while (this.pos < b.length && !WHITE.has(b[this.pos] as number) && !DELIMITER.has(b[this.pos] as number)) this.pos++;
      return new PdfName(b.toString('latin1', start, this.pos).replace(/#([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))));
    }
    if (c === 0x3c && b[this.pos + 1] === 0x3c) {
      this.pos += 2;
      return this.#dict();
    }
    if (c === 0x3c) {
      const end = b.indexOf(0x3e, this.pos);
      if (end < 0) throw new Error('unterminated hex string');
      const hex = b.toString('latin1', this.pos + 1, end).replace(/\s+/g, '');
      this.pos = end + 1;
      return Buffer.from(hex.length % 2 ? `${hex}0` : hex, 'hex').toString('latin1');
    }
    if (c === 0x28) return this.#literal();
    if (c === 0x5b) {
      this.pos++;
      const items: PdfValue[] = [];
      for (;;) {
        this.skipSpace();
        if (b[this.pos] === 0x5d) {
          this.pos++;
          return items;
        }
        this.#push(items, this.next());
      }
    }
    if (c === 0x5d || c === 0x3e || c === 0x29 || c === 0x7b || c === 0x7d) {
      this.pos++;
      return { op: String.fromCharCode(c) };
    }
    const start = this.pos;
    while (this.pos < b.length && !WHITE.has(b[this.pos] as number) && !DELIMITER.has(b[this.pos] as number)) this.pos++;
    const word = b.toString('latin1', start, this.pos);
    if (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(word)) return Number(word);
    if (word === 'true' || word === 'false') return word === 'true';
    if (word === 'null') return null;
    return { op: word };
  }

  #dict(): PdfDict {
    const dict: PdfDict = {};
    const values: PdfValue[] = [];
    for (;;) {
      this.skipSpace();
      if (this.bytes[this.pos] === 0x3e && this.bytes[this.pos + 1] === 0x3e) {
        this.pos += 2;
        break;
      }
      this.#push(values, this.next());
    }
    const items = values;
    for (let i = 0; i + 1 < items.length; i += 2) {
      const key = items[i];
      if (!(key instanceof PdfName)) throw new Error('dictionary key is not a name');
      dict[key.name] = items[i + 1] as PdfValue;
    }
    return dict;
  }

  /** Adds an item to an array or dictionary being read, folding `num gen R` into a reference. */
  #push(items: PdfValue[], item: PdfValue | { op: string } | undefined): void {
    if (item === undefined) throw new Error('unterminated array or dictionary');
    if (!isOp(item)) {
      items.push(item);
      return;
    }
    const gen = items.at(-1);
    const num = items.at(-2);
    if (item.op !== 'R' || typeof gen !== 'number' || typeof num !== 'number') throw new Error(`unexpected ${item.op}`);
    items.splice(-2, 2, new PdfRef(num, gen));
  }

  #literal(): string {
    const b = this.bytes;
    let depth = 0;
    let out = '';
    for (this.pos++; this.pos < b.length; this.pos++) {
      const c = b[this.pos] as number;
      if (c === 0x5c) {
        this.pos++;
        out += String.fromCharCode(b[this.pos] as number);
      } else if (c === 0x28) {
        depth++;
        out += '(';
      } else if (c === 0x29) {
        if (depth-- === 0) {
          this.pos++;
          return out;
        }
        out += ')';
      } else out += String.fromCharCode(c);
    }
    throw new Error('unterminated string');
  }
}

export function isOp(value: unknown): value is { op: string } {
  return typeof value === 'object' && value !== null && 'op' in value;
}

/** One value; a top-level `num gen R` becomes a reference (inside arrays and dictionaries the lexer folds them). */
export function readValue(lexer: PdfLexer): PdfValue {
  const first = lexer.next();
  if (first === undefined || isOp(first)) throw new Error('expected a value');
  if (typeof first === 'number' && Number.isInteger(first)) {
    const save = lexer.pos;
    const gen = lexer.next();
    if (typeof gen === 'number' && Number.isInteger(gen)) {
      const r = lexer.next();
      if (isOp(r) && r.op === 'R') return new PdfRef(first, gen);
    }
    lexer.pos = save;
  }
  return first;
}

type XrefEntry = { type: 1; offset: number } | { type: 2; stream: number; index: number };

const XREF_WINDOW = 256 * 1024;
const OBJECT_WINDOW = 8 * 1024;
const MAX_STREAM_BYTES = 64 * 1024 * 1024;
/** Incremental updates followed back; a file with more is left to pdf.js. */
const MAX_SECTIONS = 64;

/** Random access to a PDF's objects by number, through its newest cross-reference section and the ones before it. */
export class PdfObjects {
  readonly #entries = new Map<number, XrefEntry>();
  readonly #objectStreams = new Map<number, { bytes: Buffer; offsets: Map<number, number> }>();
  readonly #openingStreams = new Set<number>();
  trailer: PdfDict = {};
  readonly readAt: ReadAt;
  readonly size: number;

  private constructor(readAt: ReadAt, size: number) {
    this.readAt = readAt;
    this.size = size;
  }

  static async open(readAt: ReadAt, size: number): Promise<PdfObjects> {
    const objects = new PdfObjects(readAt, size);
    const tail = await readAt(Math.max(0, size - 1024), Math.min(size, 1024));
    const text = tail.toString('latin1');
    const at = text.lastIndexOf('startxref');
    const offset = Number(/^startxref\s+(\d+)/.exec(text.slice(at))?.[1]);
    if (at < 0 || !Number.isSafeInteger(offset)) throw new Error('no startxref');
    const seen = new Set<number>();
    for (let next: number | undefined = offset; next !== undefined && !seen.has(next) && seen.size < MAX_SECTIONS; ) {
      seen.add(next);
      const trailer = await objects.#section(next);
      if (Object.keys(objects.trailer).length === 0) objects.trailer = trailer;
      if (typeof trailer.XRefStm === 'number' && !seen.has(trailer.XRefStm)) {
        seen.add(trailer.XRefStm);
        await objects.#section(trailer.XRefStm);
      }
      next = typeof trailer.Prev === 'number' ? trailer.Prev : undefined;
    }
    return objects;
  }

  /** Reads one cross-reference section; entries already known (from newer sections) win. */
  async #section(offset: number): Promise<PdfDict> {
    const bytes = await this.readAt(offset, Math.min(XREF_WINDOW, this.size - offset));
    const lexer = new PdfLexer(bytes);
    const first = lexer.next();
    if (isOp(first) && first.op === 'xref') {
      for (;;) {
        const start = lexer.next();
        if (isOp(start) && start.op === 'trailer') return readValue(lexer) as PdfDict;
        const count = lexer.next();
        if (typeof start !== 'number' || typeof count !== 'number') throw new Error('malformed xref table');
        lexer.skipSpace();
        for (let i = 0; i < count; i++) {
          const line = bytes.toString('latin1', lexer.pos, lexer.pos + 20);
          const match = /^(\d{10}) (\d{5}) ([nf])/.exec(line);
          if (!match) throw new Error('malformed xref entry');
          if (match[3] === 'n' && !this.#entries.has(start + i)) this.#entries.set(start + i, { type: 1, offset: Number(match[1]) });
          lexer.pos += 20;
          lexer.skipSpace();
        }
      }
    }
    const stream = await this.#streamAt(offset, bytes);
    if (!(stream.dict.Type instanceof PdfName) || stream.dict.Type.name !== 'XRef') throw new Error('not a cross-reference stream');
    const data = await this.decode(stream);
    const widths = (stream.dict.W as number[]).map(Number);
    const index = Array.isArray(stream.dict.Index) ? (stream.dict.Index as number[]) : [0, stream.dict.Size as number];
    const rowBytes = widths.reduce((a, b) => a + b, 0);
    // A hostile /W or /Index would otherwise walk billions of rows past the end of the data without yielding.
    const rows = index.filter((_, i) => i % 2 === 1).reduce((a, b) => a + Number(b), 0);
    if (widths.length < 3 || widths.some((w) => !Number.isInteger(w) || w < 0 || w > 8) || rowBytes === 0) throw new Error('malformed cross-reference stream widths');
    if (!Number.isFinite(rows) || rows < 0 || rows * rowBytes > data.length) throw new Error('cross-reference stream shorter than its index');
    let row = 0;
    for (let s = 0; s + 1 < index.length; s += 2) {
      for (let i = 0; i < (index[s + 1] as number); i++, row++) {
        let at = row * rowBytes;
        const field = (w: number, fallback: number): number => {
          if (w === 0) return fallback;
          let v = 0;
          for (let k = 0; k < w; k++) v = v * 256 + (data[at++] as number);
          return v;
        };
        const type = field(widths[0] as number, 1);
        const a = field(widths[1] as number, 0);
        const b = field(widths[2] as number, 0);
        const num = (index[s] as number) + i;
        if (this.#entries.has(num)) continue;
        if (type === 1) this.#entries.set(num, { type: 1, offset: a });
        else if (type === 2) this.#entries.set(num, { type: 2, stream: a, index: b });
      }
    }
    return stream.dict;
  }

  /** The indirect object at `offset` (`n g obj … endobj`), read from `bytes` when given. */
  async #objectAt(offset: number, bytes?: Buffer): Promise<{ value: PdfValue; lexer: PdfLexer; base: number }> {
    const window = bytes ?? (await this.readAt(offset, Math.min(OBJECT_WINDOW, this.size - offset)));
    const lexer = new PdfLexer(window);
    const num = lexer.next();
    const gen = lexer.next();
    const obj = lexer.next();
    if (typeof num !== 'number' || typeof gen !== 'number' || !isOp(obj) || obj.op !== 'obj') throw new Error('not an object');
    try {
      return { value: readValue(lexer), lexer, base: offset };
    } catch (error) {
      // A dictionary longer than the window: read more, once.
      if (bytes || window.length >= this.size - offset) throw error;
      return this.#objectAt(offset, await this.readAt(offset, Math.min(XREF_WINDOW, this.size - offset)));
    }
  }

  async #streamAt(offset: number, bytes?: Buffer): Promise<PdfStream> {
    const { value, lexer, base } = await this.#objectAt(offset, bytes);
    return this.#streamFrom(value, lexer, base);
  }

  async #streamFrom(value: PdfValue, lexer: PdfLexer, base: number): Promise<PdfStream> {
    if (!isDict(value)) throw new Error('not a stream');
    const keyword = lexer.next();
    if (!isOp(keyword) || keyword.op !== 'stream') throw new Error('not a stream');
    let start = lexer.pos;
    if (lexer.bytes[start] === 0x0d) start++;
    if (lexer.bytes[start] === 0x0a) start++;
    const length = await this.resolve(value.Length);
    if (typeof length !== 'number' || length < 0 || length > MAX_STREAM_BYTES) throw new Error('bad stream length');
    const raw = start + length <= lexer.bytes.length ? lexer.bytes.subarray(start, start + length) : await this.readAt(base + start, length);
    if (raw.length !== length) throw new Error('stream runs past the end of the file');
    return { dict: value, raw };
  }

  async get(num: number): Promise<PdfValue> {
    const entry = this.#entries.get(num);
    if (!entry) return null;
    if (entry.type === 1) return (await this.#objectAt(entry.offset)).value;
    const container = await this.#objectStream(entry.stream);
    const at = container.offsets.get(num);
    if (at === undefined) return null;
    return readValue(new PdfLexer(container.bytes, at));
  }

  /** A stream object by number (streams are never inside object streams). */
  async getStream(num: number): Promise<PdfStream> {
    const entry = this.#entries.get(num);
    if (entry?.type !== 1) throw new Error('stream object not found');
    return this.#streamAt(entry.offset);
  }

  async #objectStream(num: number): Promise<{ bytes: Buffer; offsets: Map<number, number> }> {
    const known = this.#objectStreams.get(num);
    if (known) return known;
    // An object stream whose /Length (or filter parameters) lives inside itself would be opened again and again.
    if (this.#openingStreams.has(num)) throw new Error('object stream refers to itself');
    this.#openingStreams.add(num);
    try {
      return await this.#parseObjectStream(num);
    } finally {
      this.#openingStreams.delete(num);
    }
  }

  async #parseObjectStream(num: number): Promise<{ bytes: Buffer; offsets: Map<number, number> }> {
    const stream = await this.getStream(num);
    const bytes = await this.decode(stream);
    const first = stream.dict.First as number;
    const header = new PdfLexer(bytes);
    const offsets = new Map<number, number>();
    for (let i = 0; i < (stream.dict.N as number); i++) {
      const n = header.next();
      const off = header.next();
      if (typeof n !== 'number' || typeof off !== 'number') throw new Error('malformed object stream');
      offsets.set(n, first + off);
    }
    const parsed = { bytes, offsets };
    this.#objectStreams.set(num, parsed);
    return parsed;
  }

  async resolve(value: PdfValue | undefined): Promise<PdfValue | undefined> {
    for (let depth = 0; value instanceof PdfRef && depth < 8; depth++) value = await this.get(value.num);
    return value instanceof PdfRef ? undefined : value;
  }

  /** A stream's bytes with FlateDecode (and PNG predictors) undone; other filters throw. */
  async decode(stream: PdfStream): Promise<Buffer> {
    const filters = filterNames(await this.resolve(stream.dict.Filter));
    if (filters.length === 0) return stream.raw;
    if (filters.length !== 1 || filters[0] !== 'FlateDecode') throw new Error(`unsupported filter ${filters.join(',')}`);
    let data: Buffer = inflateSync(stream.raw, { maxOutputLength: MAX_STREAM_BYTES });
    const parms = await this.resolve(stream.dict.DecodeParms);
    if (isDict(parms) && typeof parms.Predictor === 'number' && parms.Predictor >= 10) data = undoPngRowFilters(data, typeof parms.Columns === 'number' ? parms.Columns : 1);
    return data;
  }
}

export function isDict(value: PdfValue | undefined): value is PdfDict {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof PdfName) && !(value instanceof PdfRef);
}

export function filterNames(value: PdfValue | undefined): string[] {
  if (value instanceof PdfName) return [value.name];
  if (Array.isArray(value)) return value.map((v) => (v instanceof PdfName ? v.name : '?'));
  return [];
}


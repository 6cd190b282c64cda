// Reads what an incremental update needs from a PDF on disk: the newest trailer, where each object lives (through
// classic cross-reference tables, cross-reference streams and object streams), and single objects, without loading
// the file.
import type { FileHandle } from 'node:fs/promises';
import { readRange } from '../../formats/file-ranges.ts';
import { undoPngRowFilters, UnknownRowFilterError } from '../../formats/png-rows.ts';
import { inflateSync } from 'node:zlib';
import { dictGet, filterNames, parseDict, parseInteger, parseIntegerArray, skipSpace, valueEnd, type DictEntry, type ParsedDict } from './pdf-syntax.ts';
import { WriteBackError } from './types.ts';

export type XrefEntry = { type: 0 } | { type: 1; offset: number; gen: number } | { type: 2; stream: number; index: number };

export interface PdfStructure {
  fileSize: number;
  /** Offset `startxref` names: where the newest cross-reference section begins. */
  lastXrefOffset: number;
  lastXrefIsStream: boolean;
  /** The newest trailer dictionary (for a cross-reference stream, its stream dictionary). */
  trailer: DictEntry[];
  entries: Map<number, XrefEntry>;
}

export interface PdfObject {
  /** The object's value as written. */
  text: string;
  /** For a stream object: its dictionary and its still-encoded data. */
  stream?: { dict: ParsedDict; data: Buffer };
}

const MAX_SECTIONS = 512;
const MAX_WINDOW = 8 * 1024 * 1024;
const MAX_STREAM_BYTES = 64 * 1024 * 1024;
const TAIL_BYTES = 64 * 1024;

function corrupt(message: string): WriteBackError {
  return new WriteBackError('CORRUPT', message);
}

async function readText(handle: FileHandle, offset: number, length: number, fileSize: number): Promise<string> {
  return (await readRange(handle, offset, Math.min(length, fileSize - offset))).toString('latin1');
}

async function readBytes(handle: FileHandle, offset: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await handle.read(buffer, done, length - done, offset + done);
    if (bytesRead === 0) throw corrupt('a stream runs past the end of the file');
    done += bytesRead;
  }
  return buffer;
}

/** Runs `parse` on a growing window of text at `offset` until it no longer runs out of text. */
async function withWindow<T>(handle: FileHandle, offset: number, fileSize: number, parse: (text: string) => T): Promise<T> {
  for (let size = 4096; ; size *= 4) {
    const text = await readText(handle, offset, size, fileSize);
    try {
      return parse(text);
    } catch (error) {
      const complete = offset + text.length >= fileSize || size >= MAX_WINDOW;
      if (complete || !(error instanceof WriteBackError)) throw error;
    }
  }
}

async function findStartXref(handle: FileHandle, fileSize: number): Promise<number> {
  const tail = await readText(handle, Math.max(0, fileSize - TAIL_BYTES), TAIL_BYTES, fileSize);
  const at = tail.lastIndexOf('startxref');
  const m = at === -1 ? null : /^startxref\s+(\d+)/.exec(tail.slice(at));
  if (!m) throw new WriteBackError('UNSUPPORTED', 'the PDF has no startxref; it needs repairing before its metadata can be written');
  const offset = Number(m[1]);
  if (!Number.isSafeInteger(offset) || offset >= fileSize) throw new WriteBackError('UNSUPPORTED', 'the PDF startxref points outside the file; it needs repairing first');
  return offset;
}

interface IndirectHeader {
  num: number;
  gen: number;
  /** Index (in the window text) where the object's value starts. */
  valueStart: number;
}

function objectHeader(text: string, at = 0): IndirectHeader {
  const m = /^\s*(\d+)\s+(\d+)\s+obj\b/.exec(text.slice(at, at + 64));
  if (!m) throw new WriteBackError('UNSUPPORTED', 'an object the cross-reference table points to is not where it says; the PDF needs repairing first');
  return { num: Number(m[1]), gen: Number(m[2]), valueStart: at + m[0].length };
}

/** PNG row predictors (what cross-reference streams use), undone in place of a copy. */
function undoPredictor(data: Buffer, parms: DictEntry[] | undefined): Buffer {
  const predictor = parseInteger(parms ? dictGet(parms, 'Predictor') : undefined) ?? 1;
  if (predictor === 1) return data;
  if (predictor === 2) throw new WriteBackError('UNSUPPORTED', 'TIFF predictors in PDF streams are not supported');
  const colors = parseInteger(parms ? dictGet(parms, 'Colors') : undefined) ?? 1;
  const bits = parseInteger(parms ? dictGet(parms, 'BitsPerComponent') : undefined) ?? 8;
  const columns = parseInteger(parms ? dictGet(parms, 'Columns') : undefined) ?? 1;
  const bpp = Math.max(1, Math.ceil((colors * bits) / 8));
  const rowLength = Math.ceil((colors * bits * columns) / 8);
  try {
    return undoPngRowFilters(data, rowLength, bpp);
  } catch (error) {
    if (error instanceof UnknownRowFilterError) throw corrupt(error.message);
    throw error;
  }
}

function dictValue(value: string | undefined): DictEntry[] | undefined {
  if (!value || !value.startsWith('<<')) return undefined;
  return parseDict(value, 0).entries;
}

/** Decodes stream data: no filter, or Flate (with or without a predictor). Anything else is refused. */
export function decodeStream(dict: ParsedDict, data: Buffer, maxBytes = MAX_STREAM_BYTES): Buffer {
  const filters = filterNames(dictGet(dict, 'Filter'));
  if (filters.length === 0) return data;
  if (filters.length > 1 || (filters[0] !== 'FlateDecode' && filters[0] !== 'Fl')) throw new WriteBackError('UNSUPPORTED', `stream filter ${filters.join(', ')} is not supported`);
  let inflated: Buffer;
  try {
    inflated = inflateSync(data, { maxOutputLength: maxBytes, finishFlush: 2 /* Z_SYNC_FLUSH: tolerate a missing end marker */ });
  } catch (error) {
    throw corrupt(`a compressed stream cannot be read: ${(error as Error).message}`);
  }
  const parmsValue = dictGet(dict, 'DecodeParms') ?? dictGet(dict, 'DP');
  return undoPredictor(inflated, dictValue(parmsValue?.startsWith('[') ? parmsValue.slice(1, -1).trim() : parmsValue));
}

export class PdfReader {
  readonly handle: FileHandle;
  readonly structure: PdfStructure;
  private readonly objectStreams = new Map<number, { offsets: [number, number][]; text: string }>();

  private constructor(handle: FileHandle, structure: PdfStructure) {
    this.handle = handle;
    this.structure = structure;
  }

  static async open(handle: FileHandle, fileSize: number): Promise<PdfReader> {
    const lastXrefOffset = await findStartXref(handle, fileSize);
    const entries = new Map<number, XrefEntry>();
    const visited = new Set<number>();
    let trailer: DictEntry[] | undefined;
    let lastXrefIsStream = false;
    const reader = new PdfReader(handle, { fileSize, lastXrefOffset, lastXrefIsStream, trailer: [], entries });
    let next: number | undefined = lastXrefOffset;
    while (next !== undefined) {
      if (visited.has(next) || visited.size >= MAX_SECTIONS) throw corrupt('the cross-reference sections form a loop');
      visited.add(next);
      const section = await reader.readSection(next, entries);
      if (!trailer) {
        trailer = section.trailer;
        lastXrefIsStream = section.isStream;
      }
      const hybrid = parseInteger(dictGet(section.trailer, 'XRefStm'));
      if (hybrid !== undefined && !section.isStream && !visited.has(hybrid)) {
        visited.add(hybrid);
        await reader.readSection(hybrid, entries);
      }
      next = parseInteger(dictGet(section.trailer, 'Prev'));
    }
    return new PdfReader(handle, { fileSize, lastXrefOffset, lastXrefIsStream, trailer: trailer ?? [], entries });
  }

  /** Reads one cross-reference section into `entries` (entries already known from newer sections win). */
  private async readSection(offset: number, entries: Map<number, XrefEntry>): Promise<{ trailer: DictEntry[]; isStream: boolean }> {
    const { fileSize } = this.structure;
    if (offset < 0 || offset >= fileSize) throw new WriteBackError('UNSUPPORTED', 'a cross-reference offset points outside the file; the PDF needs repairing first');
    const head = await readText(this.handle, offset, 64, fileSize);
    const start = skipSpace(head, 0);
    if (head.startsWith('xref', start)) return { trailer: await this.readTable(offset + start + 4, entries), isStream: false };
    return { trailer: await this.readXrefStream(offset, entries), isStream: true };
  }

  private async readTable(position: number, entries: Map<number, XrefEntry>): Promise<DictEntry[]> {
    const { fileSize } = this.structure;
    let pos = position;
    for (;;) {
      const head = await readText(this.handle, pos, 256, fileSize);
      const at = skipSpace(head, 0);
      if (head.startsWith('trailer', at)) {
        return withWindow(this.handle, pos + at + 7, fileSize, (text) => parseDict(text, 0).entries);
      }
      const m = /^(\d+)\s+(\d+)\s*/.exec(head.slice(at));
      if (!m) throw new WriteBackError('UNSUPPORTED', 'a cross-reference table is damaged; the PDF needs repairing first');
      const first = Number(m[1]);
      const count = Number(m[2]);
      if (count * 20 > MAX_STREAM_BYTES) throw new WriteBackError('UNSUPPORTED', 'the cross-reference table is too large');
      pos += at + m[0].length;
      const body = await readText(this.handle, pos, count * 20 + 64, fileSize);
      const entry = /(\d{10})\s(\d{5})\s([nf])\s*/y;
      let i = 0;
      for (let n = 0; n < count; n++) {
        entry.lastIndex = i;
        const e = entry.exec(body);
        if (!e) throw new WriteBackError('UNSUPPORTED', 'a cross-reference table entry is damaged; the PDF needs repairing first');
        const num = first + n;
        if (!entries.has(num)) entries.set(num, e[3] === 'n' ? { type: 1, offset: Number(e[1]), gen: Number(e[2]) } : { type: 0 });
        i = entry.lastIndex;
      }
      pos += i;
    }
  }

  private async readXrefStream(offset: number, entries: Map<number, XrefEntry>): Promise<DictEntry[]> {
    const object = await this.readObjectAt(offset);
    if (!object.stream) throw new WriteBackError('UNSUPPORTED', 'startxref does not point at a cross-reference table or stream');
    const dict = object.stream.dict;
    if (dictGet(dict, 'Type') !== '/XRef') throw new WriteBackError('UNSUPPORTED', 'startxref does not point at a cross-reference stream');
    const data = decodeStream(dict, object.stream.data);
    const widths = parseIntegerArray(dictGet(dict, 'W'));
    const size = parseInteger(dictGet(dict, 'Size'));
    if (!widths || widths.length !== 3 || size === undefined || widths.some((w) => w < 0 || w > 8)) throw corrupt('a cross-reference stream has no usable /W or /Size');
    const index = parseIntegerArray(dictGet(dict, 'Index')) ?? [0, size];
    const rowLength = widths.reduce((a, b) => a + b, 0);
    const field = (row: number, f: number, fallback: number): number => {
      const width = widths[f] as number;
      if (width === 0) return fallback;
      let at = row * rowLength + widths.slice(0, f).reduce((a, b) => a + b, 0);
      let value = 0;
      for (let k = 0; k < width; k++) value = value * 256 + (data[at++] as number);
      return value;
    };
    let row = 0;
    for (let s = 0; s + 1 < index.length; s += 2) {
      const first = index[s] as number;
      const count = index[s + 1] as number;
      for (let n = 0; n < count; n++, row++) {
        if ((row + 1) * rowLength > data.length) throw corrupt('a cross-reference stream is shorter than its index says');
        const num = first + n;
        if (entries.has(num)) continue;
        const type = field(row, 0, 1);
        if (type === 1) entries.set(num, { type: 1, offset: field(row, 1, 0), gen: field(row, 2, 0) });
        else if (type === 2) entries.set(num, { type: 2, stream: field(row, 1, 0), index: field(row, 2, 0) });
        else entries.set(num, { type: 0 });
      }
    }
    return object.stream.dict.entries;
  }

  /** The object written at `offset` (`n g obj … endobj`). */
  private async readObjectAt(offset: number): Promise<PdfObject> {
    const { fileSize } = this.structure;
    const parsed = await withWindow(this.handle, offset, fileSize, (text) => {
      const header = objectHeader(text);
      const end = valueEnd(text, header.valueStart);
      const value = text.slice(header.valueStart, end).trim();
      const after = skipSpace(text, end);
      if (!text.startsWith('stream', after)) return { value };
      let dataStart = after + 6;
      if (text[dataStart] === '\r') dataStart++;
      if (text[dataStart] === '\n') dataStart++;
      return { value, dataStart };
    });
    if (parsed.dataStart === undefined) return { text: parsed.value };
    const dict = parseDict(parsed.value, 0);
    let length = parseInteger(dictGet(dict, 'Length'));
    if (length === undefined) {
      const ref = /^(\d+)\s+(\d+)\s+R$/.exec(dictGet(dict, 'Length') ?? '');
      if (ref) length = parseInteger((await this.object(Number(ref[1]))).text);
    }
    if (length === undefined || length < 0 || length > MAX_STREAM_BYTES) throw corrupt('a stream has no usable /Length');
    return { text: parsed.value, stream: { dict, data: await readBytes(this.handle, offset + parsed.dataStart, length) } };
  }

  /** The newest definition of object `num`. */
  async object(num: number, depth = 0): Promise<PdfObject> {
    if (depth > 4) throw corrupt('object lookups nest too deeply');
    const entry = this.structure.entries.get(num);
    if (!entry || entry.type === 0) throw corrupt(`object ${num} is not in the file`);
    if (entry.type === 1) {
      const object = await this.readObjectAt(entry.offset);
      return object;
    }
    let objectStream = this.objectStreams.get(entry.stream);
    if (!objectStream) {
      const container = await this.object(entry.stream, depth + 1);
      if (!container.stream) throw corrupt(`object stream ${entry.stream} is not a stream`);
      const decoded = decodeStream(container.stream.dict, container.stream.data).toString('latin1');
      const n = parseInteger(dictGet(container.stream.dict, 'N')) ?? 0;
      const first = parseInteger(dictGet(container.stream.dict, 'First')) ?? 0;
      const numbers = decoded.slice(0, first).trim().split(/\s+/).map(Number);
      const offsets: [number, number][] = [];
      for (let i = 0; i + 1 < numbers.length && offsets.length < n; i += 2) offsets.push([numbers[i] as number, first + (numbers[i + 1] as number)]);
      objectStream = { offsets, text: decoded };
      this.objectStreams.set(entry.stream, objectStream);
    }
    const slot = objectStream.offsets[entry.index];
    if (!slot || slot[0] !== num) throw corrupt(`object ${num} is not where its object stream says`);
    const end = valueEnd(objectStream.text, slot[1]);
    return { text: objectStream.text.slice(slot[1], end).trim() };
  }

  async generationOf(num: number): Promise<number> {
    const entry = this.structure.entries.get(num);
    return entry?.type === 1 ? entry.gen : 0;
  }
}

// Just enough of the PDF object syntax to read a trailer, a dictionary or an object header and to write new ones:
// values are kept as the exact text they were written as (latin1, one character per byte), never re-encoded.
import { WriteBackError } from './types.ts';

const WHITESPACE = new Set([0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]);
const DELIMITERS = new Set([0x28, 0x29, 0x3c, 0x3e, 0x5b, 0x5d, 0x7b, 0x7d, 0x2f, 0x25]);

export function isWhitespace(c: number): boolean {
  return WHITESPACE.has(c);
}

function isRegular(c: number): boolean {
  return !WHITESPACE.has(c) && !DELIMITERS.has(c);
}

function corrupt(message: string): WriteBackError {
  return new WriteBackError('CORRUPT', message);
}

/** Skips whitespace and comments. */
export function skipSpace(s: string, i: number): number {
  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (WHITESPACE.has(c)) i++;
    else if (c === 0x25) {
      while (i < s.length && s[i] !== '\n' && s[i] !== '\r') i++;
    } else break;
  }
  return i;
}

/** End of the run of regular characters at `i` (a number, keyword or name body). */
function regularEnd(s: string, i: number): number {
  while (i < s.length && isRegular(s.charCodeAt(i))) i++;
  return i;
}

function literalStringEnd(s: string, i: number): number {
  let depth = 0;
  for (let j = i; j < s.length; j++) {
    const c = s[j];
    if (c === '\\') j++;
    else if (c === '(') depth++;
    else if (c === ')') {
      depth--;
      if (depth === 0) return j + 1;
    }
  }
  throw corrupt('an unterminated string');
}

const MAX_DEPTH = 100;

/** End of the value (direct object or indirect reference) starting at `i` (after skipping space). */
export function valueEnd(s: string, start: number, depth = 0): number {
  if (depth > MAX_DEPTH) throw corrupt('objects nested too deeply');
  const i = skipSpace(s, start);
  if (i >= s.length) throw corrupt('a value is missing');
  const c = s[i];
  if (c === '(') return literalStringEnd(s, i);
  if (c === '<' && s[i + 1] === '<') {
    let j = skipSpace(s, i + 2);
    while (!(s[j] === '>' && s[j + 1] === '>')) {
      if (j >= s.length) throw corrupt('an unterminated dictionary');
      if (s[j] !== '/') throw corrupt('a dictionary key is not a name');
      j = skipSpace(s, valueEnd(s, regularEnd(s, j + 1), depth + 1));
    }
    return j + 2;
  }
  if (c === '<') {
    const end = s.indexOf('>', i);
    if (end === -1) throw corrupt('an unterminated hex string');
    return end + 1;
  }
  if (c === '[') {
    let j = skipSpace(s, i + 1);
    while (s[j] !== ']') {
      if (j >= s.length) throw corrupt('an unterminated array');
      j = skipSpace(s, valueEnd(s, j, depth + 1));
    }
    return j + 1;
  }
  if (c === '/') return regularEnd(s, i + 1);
  const end = regularEnd(s, i);
  if (end === i) throw corrupt(`unexpected ${JSON.stringify(c)} in an object`);
  // `12 0 R` is one value: look past two integers for the R.
  if (/^\d+$/.test(s.slice(i, end))) {
    const genStart = skipSpace(s, end);
    const genEnd = regularEnd(s, genStart);
    if (genEnd > genStart && /^\d+$/.test(s.slice(genStart, genEnd))) {
      const r = skipSpace(s, genEnd);
      if (s[r] === 'R' && (r + 1 >= s.length || !isRegular(s.charCodeAt(r + 1)))) return r + 1;
    }
  }
  return end;
}

export interface DictEntry {
  /** Key without the slash, as written (`#xx` escapes kept). */
  key: string;
  /** The value's text as written, trimmed. */
  value: string;
}

export interface ParsedDict {
  entries: DictEntry[];
  /** Index just past `>>`. */
  end: number;
}

export function parseDict(s: string, start: number): ParsedDict {
  let i = skipSpace(s, start);
  if (!(s[i] === '<' && s[i + 1] === '<')) throw corrupt('a dictionary was expected');
  i = skipSpace(s, i + 2);
  const entries: DictEntry[] = [];
  while (!(s[i] === '>' && s[i + 1] === '>')) {
    if (i >= s.length) throw corrupt('an unterminated dictionary');
    if (s[i] !== '/') throw corrupt('a dictionary key is not a name');
    const keyEnd = regularEnd(s, i + 1);
    const valueStart = skipSpace(s, keyEnd);
    const end = valueEnd(s, valueStart);
    entries.push({ key: s.slice(i + 1, keyEnd), value: s.slice(valueStart, end).trim() });
    i = skipSpace(s, end);
  }
  return { entries, end: i + 2 };
}

export function dictGet(dict: ParsedDict | DictEntry[], key: string): string | undefined {
  const entries = Array.isArray(dict) ? dict : dict.entries;
  for (let i = entries.length - 1; i >= 0; i--) if (entries[i]?.key === key) return entries[i]?.value;
  return undefined;
}

export function parseReference(value: string | undefined): { num: number; gen: number } | undefined {
  const m = value ? /^(\d+)\s+(\d+)\s+R$/.exec(value.trim()) : null;
  return m ? { num: Number(m[1]), gen: Number(m[2]) } : undefined;
}

export function parseInteger(value: string | undefined): number | undefined {
  return value !== undefined && /^[+-]?\d+$/.test(value.trim()) ? Number(value.trim()) : undefined;
}

/** Dictionary text in one canonical layout: applied to its own output it gives the same text. */
export function serializeDict(entries: DictEntry[]): string {
  return `<<${entries.map((e) => ` /${e.key} ${e.value}`).join('')} >>`;
}

/** A text string: literal when plain ASCII, else UTF-16BE with a byte order mark. */
export function pdfTextString(value: string): string {
  if (/^[\x20-\x7e]*$/.test(value)) return `(${value.replace(/[\\()]/g, (c) => `\\${c}`)})`;
  const bytes = Buffer.from(`\uFEFF${value}`, 'utf16le').swap16();
  return `<${bytes.toString('hex').toUpperCase()}>`;
}

/** Array values of a dictionary entry such as `/W [1 2 1]` or `/Index [0 5 10 2]`. */
export function parseIntegerArray(value: string | undefined): number[] | undefined {
  if (!value) return undefined;
  const m = /^\[([\s\d+-]*)\]$/.exec(value.trim());
  if (!m) return undefined;
  const parts = (m[1] as string).trim().split(/\s+/).filter(Boolean);
  const numbers = parts.map(Number);
  return numbers.every(Number.isInteger) ? numbers : undefined;
}

/** Names in a `/Filter` value (a name or an array of names). */
export function filterNames(value: string | undefined): string[] {
  if (!value) return [];
  return [...value.matchAll(/\/([^\s/[\]<>()]+)/g)].map((m) => m[1] as string);
}

// Metadata from file names by a pattern such as `{Authors} - {Title} ({Published:yyyy})`, as Grimmory's bookdrop
// "extract from file name" does: `{Name}` or `{Name:format}` placeholders and `*` wildcards between literal text,
// matched anywhere in the file name without its extension. Placeholders: SeriesName, Title, Subtitle, Authors
// (split on , ; &), SeriesNumber, Published (a date; `:format` with yyyy, yy, MM, M, dd, d), Publisher, Language,
// SeriesTotal, ISBN10, ISBN13, ASIN. Unknown names match like text and are not kept.
//
// Matching is a search over (token, position) with failures remembered, which finds the same match a backtracking
// regular expression would (lazy text, greedy numbers, leftmost start) in time bounded by tokens × length², so no
// pattern can make it run away, whatever a user types.
import type { DropMetadata } from './bookdrop-metadata.ts';

type GroupKind = 'text' | 'seriesNumber' | 'letters' | 'digits' | 'isbn10' | 'isbn13' | 'asin' | 'date';

interface Literal {
  type: 'literal';
  chars: string[];
}

interface Group {
  type: 'group';
  name: string;
  kind: GroupKind;
  /** Text groups: the last placeholder with nothing after it takes as much as it can. */
  greedy: boolean;
  /** For `{Published:format}`: the format, and its elements for matching. */
  format?: string;
  dateElements?: DateElement[];
}

type Token = Literal | Group;
type DateElement = { digits: [min: number, max: number] } | { char: string };

export interface ParsedNamePattern {
  tokens: Token[];
}

const KINDS: Record<string, GroupKind> = {
  SeriesName: 'text', Title: 'text', Subtitle: 'text', Authors: 'text', SeriesNumber: 'seriesNumber', Published: 'text', Publisher: 'text',
  Language: 'letters', SeriesTotal: 'digits', ISBN10: 'isbn10', ISBN13: 'isbn13', ASIN: 'asin',
};

const PLACEHOLDER = /\{(\w+)(?::(.*?))?\}|\*/g;

/** A `{Published:…}` format as matched text: yyyy and yy four and two digits, MM and dd two, M and d one or two. */
function dateElements(format: string): DateElement[] {
  const fields: [text: string, digits: [number, number]][] = [['yyyy', [4, 4]], ['yy', [2, 2]], ['MM', [2, 2]], ['M', [1, 2]], ['dd', [2, 2]], ['d', [1, 2]]];
  const out: DateElement[] = [];
  let i = 0;
  while (i < format.length) {
    const field = fields.find(([text]) => format.startsWith(text, i));
    if (field) {
      out.push({ digits: field[1] });
      i += field[0].length;
      continue;
    }
    const ch = String.fromCodePoint(format.codePointAt(i) as number);
    out.push({ char: ch });
    i += ch.length;
  }
  return out;
}

/** Undefined for a blank pattern. */
export function parseNamePattern(pattern: string): ParsedNamePattern | undefined {
  if (pattern.trim() === '') return undefined;
  const matches = [...pattern.matchAll(PLACEHOLDER)];
  const tokens: Token[] = [];
  let last = 0;
  matches.forEach((m, i) => {
    const start = m.index;
    if (start > last) tokens.push({ type: 'literal', chars: Array.from(pattern.slice(last, start)) });
    const name = m[0] === '*' ? '*' : (m[1] as string);
    const format = m[0] === '*' ? undefined : m[2];
    const end = start + m[0].length;
    const greedy = i === matches.length - 1 && end === pattern.length;
    if (name === 'Published' && format !== undefined) tokens.push({ type: 'group', name, kind: 'date', greedy: false, format, dateElements: dateElements(format) });
    else tokens.push({ type: 'group', name, kind: KINDS[name] ?? 'text', greedy, ...(format !== undefined ? { format } : {}) });
    last = end;
  });
  if (last < pattern.length) tokens.push({ type: 'literal', chars: Array.from(pattern.slice(last)) });
  return { tokens };
}

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
const isLetter = (c: string | undefined): boolean => c !== undefined && /^[A-Za-z]$/.test(c);
const isAlnum = (c: string | undefined): boolean => isDigit(c) || isLetter(c);
/** What `.` does not match in Java. */
const isLineBreak = (c: string | undefined): boolean => c === '\n' || c === '\r' || c === '\u0085' || c === '\u2028' || c === '\u2029';

function runLength(chars: string[], pos: number, test: (c: string | undefined) => boolean): number {
  let n = 0;
  while (pos + n < chars.length && test(chars[pos + n])) n++;
  return n;
}

/** Where a group starting at `pos` may end, in the order a backtracking regex would try them. */
function* groupEnds(group: Group, chars: string[], pos: number): Generator<number> {
  switch (group.kind) {
    case 'text': {
      const max = runLength(chars, pos, (c) => !isLineBreak(c));
      if (group.greedy) for (let n = max; n >= 1; n--) yield pos + n;
      else for (let n = 1; n <= max; n++) yield pos + n;
      return;
    }
    case 'digits':
    case 'letters': {
      const max = runLength(chars, pos, group.kind === 'digits' ? isDigit : isLetter);
      for (let n = max; n >= 1; n--) yield pos + n;
      return;
    }
    case 'seriesNumber': {
      // \d+(?:\.\d+)?
      const whole = runLength(chars, pos, isDigit);
      if (whole === 0) return;
      if (chars[pos + whole] === '.') {
        const fraction = runLength(chars, pos + whole + 1, isDigit);
        for (let n = fraction; n >= 1; n--) yield pos + whole + 1 + n;
      }
      for (let n = whole; n >= 1; n--) yield pos + n;
      return;
    }
    case 'isbn10':
      if (runLength(chars, pos, isDigit) >= 9 && (isDigit(chars[pos + 9]) || chars[pos + 9] === 'X' || chars[pos + 9] === 'x')) yield pos + 10;
      return;
    case 'isbn13':
      if (runLength(chars, pos, isDigit) >= 13) yield pos + 13;
      return;
    case 'asin': {
      const amazon = chars[pos] === 'B' && runLength(chars, pos + 1, isAlnum) >= 9;
      const isbn = runLength(chars, pos, isDigit) >= 9 && (isDigit(chars[pos + 9]) || chars[pos + 9] === 'X' || chars[pos + 9] === 'x');
      if (amazon || isbn) yield pos + 10;
      return;
    }
    case 'date':
      yield* dateEnds(group.dateElements ?? [], 0, chars, pos);
      return;
  }
}

function* dateEnds(elements: DateElement[], index: number, chars: string[], pos: number): Generator<number> {
  const element = elements[index];
  if (!element) {
    yield pos;
    return;
  }
  if ('char' in element) {
    if (chars[pos] === element.char) yield* dateEnds(elements, index + 1, chars, pos + 1);
    return;
  }
  const [min, max] = element.digits;
  const available = Math.min(max, runLength(chars, pos, isDigit));
  for (let n = available; n >= min; n--) yield* dateEnds(elements, index + 1, chars, pos + n);
}

/** The captured text of each group, or undefined when the pattern does not occur in `name`. */
function search(parsed: ParsedNamePattern, chars: string[]): string[] | undefined {
  const { tokens } = parsed;
  const width = chars.length + 1;
  const failed = new Uint8Array((tokens.length + 1) * width);
  const captures: string[] = [];

  const match = (t: number, pos: number): boolean => {
    if (t === tokens.length) return true;
    if (failed[t * width + pos]) return false;
    const token = tokens[t] as Token;
    if (token.type === 'literal') {
      const ok = token.chars.every((c, i) => chars[pos + i] === c) && match(t + 1, pos + token.chars.length);
      if (!ok) failed[t * width + pos] = 1;
      return ok;
    }
    for (const end of groupEnds(token, chars, pos)) {
      if (match(t + 1, end)) {
        captures[t] = chars.slice(pos, end).join('');
        return true;
      }
    }
    failed[t * width + pos] = 1;
    return false;
  };

  for (let start = 0; start <= chars.length; start++) {
    if (match(0, start)) return tokens.map((_, i) => captures[i] ?? '');
  }
  return undefined;
}

/** Java's String.trim: only characters up to U+0020. */
function javaTrim(value: string): string {
  // eslint-disable-next-line no-control-regex -- trimming control characters is the point
  return value.replace(/^[\x00-\x20]+|[\x00-\x20]+$/g, '');
}

/** `Some Name.epub` → `Some Name`: the name before its last dot. */
function nameWithoutExtension(fileName: string): string {
  const dot = fileName.lastIndexOf('.');
  return dot === -1 ? fileName : fileName.slice(0, dot);
}

/** Metadata read from a file name, or undefined when the pattern does not match it. */
export function extractFromFileName(fileName: string, parsed: ParsedNamePattern): DropMetadata | undefined {
  const chars = Array.from(nameWithoutExtension(fileName));
  const captured = search(parsed, chars);
  if (!captured) return undefined;
  const out: DropMetadata = {};
  parsed.tokens.forEach((token, i) => {
    if (token.type !== 'group') return;
    const value = javaTrim(captured[i] ?? '');
    if (value === '') return;
    applyValue(out, token, value);
  });
  return out;
}

function applyValue(out: DropMetadata, group: Group, value: string): void {
  switch (group.name) {
    case 'SeriesName':
      out.seriesName = value;
      return;
    case 'Title':
      out.title = value;
      return;
    case 'Subtitle':
      out.subtitle = value;
      return;
    case 'Authors': {
      const authors = value.split(/[,;&]/).map((a) => a.trim()).filter((a) => a !== '');
      if (authors.length > 0) out.authors = authors;
      return;
    }
    case 'SeriesNumber': {
      const n = Number(value);
      if (Number.isFinite(n)) out.seriesNumber = Math.fround(n) === n ? n : Number(Math.fround(n).toPrecision(7));
      return;
    }
    case 'Published': {
      const date = parsePublished(value, group.format);
      if (date) out.publishedDate = date;
      return;
    }
    case 'Publisher':
      out.publisher = value;
      return;
    case 'Language':
      out.language = value;
      return;
    case 'SeriesTotal': {
      const n = Number(value);
      if (Number.isInteger(n) && n <= 2_147_483_647) out.seriesTotal = n;
      return;
    }
    case 'ISBN10':
      out.isbn10 = value;
      return;
    case 'ISBN13':
      out.isbn13 = value;
      return;
    case 'ASIN':
      out.asin = value;
      return;
  }
}

// --- dates -------------------------------------------------------------------------------------------------------

/** The format Grimmory guesses for a date written without one. */
export function detectDateFormat(value: string): string | undefined {
  const v = value.trim();
  if (v === '') return undefined;
  if (/^\d{4}$/.test(v)) return 'yyyy';
  if (/^\d{2}$/.test(v)) return 'yy';
  if (/^\d{8}$/.test(v)) return 'yyyyMMdd';
  let m = /^(\d{4})(\D)(\d{1,2})$/.exec(v);
  if (m) return `yyyy${m[2]}${(m[3] as string).length === 1 ? 'M' : 'MM'}`;
  m = /^(\d{1,2})(\D)(\d{4})$/.exec(v);
  if (m) return `${(m[1] as string).length === 1 ? 'M' : 'MM'}${m[2]}yyyy`;
  m = /^(\d{1,4})(\D)(\d{1,2})\2(\d{1,4})$/.exec(v);
  if (m) return flexibleFormat(m[1] as string, m[2] as string, m[3] as string, m[4] as string);
  return undefined;
}

function flexibleFormat(a: string, sep: string, b: string, c: string): string {
  const [va, vb, vc] = [Number(a), Number(b), Number(c)];
  const isYear = (part: string, v: number): boolean => part.length === 4 || v > 31;
  const year = (part: string): string => (part.length === 4 ? 'yyyy' : 'yy');
  const month = (part: string): string => (part.length === 2 ? 'MM' : 'M');
  const day = (part: string): string => (part.length === 2 ? 'dd' : 'd');
  if (isYear(a, va)) {
    if (vc <= 12 && vb > 12) return [year(a), day(b), month(c)].join(sep);
    return [year(a), month(b), day(c)].join(sep);
  }
  if (isYear(c, vc)) {
    if (vb <= 12 && va > 12) return [day(a), month(b), year(c)].join(sep);
    if (va <= 12 && vb > 12) return [month(a), day(b), year(c)].join(sep);
    return [day(a), month(b), year(c)].join(sep);
  }
  return [day(a), month(b), c.length === 2 ? 'yy' : 'y'].join(sep);
}

type Field = { letter: 'y' | 'M' | 'd'; count: number } | { literal: string };

function formatFields(format: string): Field[] | undefined {
  const out: Field[] = [];
  let i = 0;
  while (i < format.length) {
    const c = format[i] as string;
    if (c === 'y' || c === 'M' || c === 'd') {
      let n = 1;
      while (format[i + n] === c) n++;
      out.push({ letter: c, count: n });
      i += n;
    } else if (/[A-Za-z]/.test(c)) {
      // Text months, weekdays, eras...: not something a file name date is read with.
      return undefined;
    } else {
      out.push({ literal: c });
      i++;
    }
  }
  return out;
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/**
 * Reads `value` with a date format of y/M/d fields (`yy` is 2000–2099, as Java's formatter has it); a day past the
 * end of its month becomes the month's last day. A year and month give the first of the month.
 */
function parseWithFormat(value: string, format: string): string | undefined {
  const fields = formatFields(format);
  if (!fields) return undefined;
  const found: Partial<Record<'y' | 'M' | 'd', number>> = {};
  let pos = 0;
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i] as Field;
    if ('literal' in field) {
      if (value[pos] !== field.literal) return undefined;
      pos++;
      continue;
    }
    // Digits this field may take, leaving enough for the fixed-width fields right after it (`yyyyMMdd`).
    let reserved = 0;
    for (let j = i + 1; j < fields.length; j++) {
      const next = fields[j] as Field;
      if ('literal' in next) break;
      reserved += next.letter === 'y' ? (next.count === 2 ? 2 : next.count) : next.count === 1 ? 1 : 2;
    }
    const run = runLength(Array.from(value), pos, isDigit);
    let min: number;
    let max: number;
    if (field.letter === 'y') [min, max] = field.count === 2 ? [2, 2] : [field.count, 9];
    else if (field.count === 1) [min, max] = [1, 2];
    else if (field.count === 2) [min, max] = [2, 2];
    else return undefined;
    const take = Math.min(max, run - reserved);
    if (take < min) return undefined;
    let n = Number(value.slice(pos, pos + take));
    if (field.letter === 'y' && field.count === 2) n += 2000;
    found[field.letter] = n;
    pos += take;
  }
  if (pos !== value.length || found.y === undefined || found.M === undefined) return undefined;
  const { y, M } = found;
  if (M < 1 || M > 12 || y < 1) return undefined;
  let d = found.d ?? 1;
  if (d < 1 || d > 31) return undefined;
  d = Math.min(d, daysIn(y, M));
  return `${pad(y, 4)}-${pad(M)}-${pad(d)}`;
}

/** A date from a file name as `yyyy-MM-dd`, with its format given or guessed. */
export function parsePublished(value: string, format: string | undefined): string | undefined {
  const detected = format === undefined || format.trim() === '' ? detectDateFormat(value) : format;
  if (detected === undefined) return undefined;
  if (detected === 'yyyy') return /^\d{4}$/.test(value) && Number(value) > 0 ? `${value}-01-01` : undefined;
  if (detected === 'yy') {
    if (!/^\d{1,2}$/.test(value)) return undefined;
    const n = Number(value);
    return `${n < 50 ? 2000 + n : 1900 + n}-01-01`;
  }
  return parseWithFormat(value, detected);
}

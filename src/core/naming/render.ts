// Renders a naming pattern for one book file into a relative path (`/`-separated), following behaviors.md §4.
import { parsePattern, type InlineNode, type ParsedPattern, type PatternNode } from './pattern.ts';
import { isBlank, listItems, sanitize, truncateUtf8, utf8Length } from './text.ts';

/** Byte limits, in UTF-8. */
export const LIMITS = {
  /** title, subtitle, series, publisher values */
  value: 200,
  /** the joined authors value, before ` et al.` */
  authors: 180,
  /** any path component of the result */
  component: 245,
  /** an extension longer than this is not kept apart when a file name is cut */
  extension: 50,
} as const;

const ET_AL = ' et al.';

/** What the pattern can say about a book and the file being named. */
export interface BookFacts {
  title?: string | null;
  subtitle?: string | null;
  /** In display order; joined with `, `. */
  authors?: readonly string[] | null;
  /** ISO date (`1965-08-01`), or just a year. */
  publishedDate?: string | null;
  seriesName?: string | null;
  seriesNumber?: number | null;
  language?: string | null;
  publisher?: string | null;
  isbn13?: string | null;
  isbn10?: string | null;
  /** The current name of the file (or of the folder, for a folder audiobook). */
  fileName: string;
  /** A folder audiobook: no extension is split off or appended, and dots are left alone. */
  folderBased?: boolean;
}

export type PatternValues = Record<string, string>;

/**
 * The extension of a file as the pattern sees it: what follows the last dot (`Dune.epub` → `epub`), except that the
 * compound `.fb2.zip` stays whole so a renamed FB2 archive is still recognised as a book. Folders have none.
 */
export function fileExtension(fileName: string, folderBased = false): string {
  if (folderBased) return '';
  if (fileName.toLowerCase().endsWith('.fb2.zip') && fileName.length > '.fb2.zip'.length) return fileName.slice(-'fb2.zip'.length);
  const dot = fileName.lastIndexOf('.');
  return dot >= 0 && dot < fileName.length - 1 ? fileName.slice(dot + 1) : '';
}

/** The file name without its extension (a leading dot is not an extension separator). */
export function fileStem(fileName: string, folderBased = false): string {
  if (folderBased) return fileName;
  const ext = fileExtension(fileName);
  if (ext === '' || fileName.length === ext.length + 1) return fileName;
  return fileName.slice(0, fileName.length - ext.length - 1);
}

/** Authors joined with `, `; when longer than 180 bytes, cut after the last author that fits, plus ` et al.`. */
export function joinAuthors(authors: readonly string[]): string {
  const joined = authors.join(', ');
  if (utf8Length(joined) <= LIMITS.authors) return joined;
  const parts = listItems(joined);
  let out = '';
  let bytes = 0;
  for (const [i, author] of parts.entries()) {
    const size = utf8Length(author) + (i > 0 ? 2 : 0);
    if (bytes + size > LIMITS.authors) {
      return out === '' ? truncateUtf8(author, LIMITS.authors - utf8Length(ET_AL)) + ET_AL : out + ET_AL;
    }
    out += i > 0 ? `, ${author}` : author;
    bytes += size;
  }
  return out;
}

/** The shortest decimal text that reads back as the same 32-bit float (Java's `Float.toString`, without exponents). */
function floatText(value: number): string {
  const target = Math.fround(value);
  for (let digits = 1; digits <= 9; digits++) {
    const text = String(Number(target.toPrecision(digits)));
    if (Math.fround(Number(text)) === target) return text.includes('.') ? text : `${text}.0`;
  }
  return String(target);
}

/** Java's `%02d`: at least two characters, the sign counting as one. */
function pad2(n: number): string {
  return String(n === 0 ? 0 : n).padStart(2, '0');
}

/** `1` → `01`, `12` → `12`, `1.5` → `01.5`. */
export function formatSeriesIndex(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '';
  const f = Math.fround(value);
  const whole = Math.trunc(f);
  if (f === whole) return pad2(whole);
  const text = floatText(f);
  return pad2(whole) + text.slice(text.indexOf('.'));
}

function yearOf(date: string | null | undefined): string {
  const m = date ? /^\s*([+-]?\d{1,9})(?:-|$|T)/.exec(date) : null;
  return m ? String(Number(m[1])) : '';
}

/** The value of every placeholder for one file (already sanitised and cut to their limits). */
export function patternValues(facts: BookFacts): PatternValues {
  const fileName = facts.fileName.trim();
  const folderBased = facts.folderBased ?? false;
  const stem = isBlank(fileName) ? 'Untitled' : folderBased ? fileName : fileName.lastIndexOf('.') > 0 ? fileName.slice(0, fileName.lastIndexOf('.')) : fileName;
  let title = sanitize(facts.title);
  if (isBlank(title)) title = sanitize(stem);
  return {
    authors: sanitize(joinAuthors(facts.authors ?? [])),
    title: truncateUtf8(title, LIMITS.value),
    subtitle: truncateUtf8(sanitize(facts.subtitle), LIMITS.value),
    year: sanitize(yearOf(facts.publishedDate)),
    series: truncateUtf8(sanitize(facts.seriesName), LIMITS.value),
    seriesIndex: sanitize(formatSeriesIndex(facts.seriesNumber)),
    language: sanitize(facts.language),
    publisher: truncateUtf8(sanitize(facts.publisher), LIMITS.value),
    isbn: sanitize(facts.isbn13 ?? facts.isbn10 ?? ''),
    currentFilename: fileName,
    extension: sanitize(fileExtension(fileName, folderBased)),
  };
}

function firstCodePoint(value: string): string {
  const cp = value.codePointAt(0);
  return cp === undefined ? '' : String.fromCodePoint(cp);
}

export function applyModifier(value: string, modifier: string, field: string): string {
  if (value === '') return value;
  switch (modifier) {
    case 'first':
      return (listItems(value)[0] ?? '').trim();
    case 'sort': {
      const first = (listItems(value)[0] ?? '').trim();
      const space = first.lastIndexOf(' ');
      return space > 0 ? `${first.slice(space + 1)}, ${first.slice(0, space)}` : first;
    }
    case 'initial': {
      let target = value;
      if (field === 'authors') {
        const first = (listItems(value)[0] ?? '').trim();
        const space = first.lastIndexOf(' ');
        target = space > 0 ? first.slice(space + 1) : first;
      }
      return firstCodePoint(target).toUpperCase();
    }
    case 'upper':
      return value.toUpperCase();
    case 'lower':
      return value.toLowerCase();
    default:
      return value;
  }
}

function placeholderValue(node: Extract<InlineNode, { type: 'placeholder' }>, values: PatternValues, unknown: 'keep' | 'empty'): string {
  const value = values[node.name];
  if (value === undefined) return unknown === 'keep' ? node.raw : '';
  return node.modifier ? applyModifier(value, node.modifier, node.name) : value;
}

function renderInline(nodes: InlineNode[], values: PatternValues, unknown: 'keep' | 'empty'): string {
  return nodes.map((n) => (n.type === 'text' ? n.text : placeholderValue(n, values, unknown))).join('');
}

function renderNode(node: PatternNode, values: PatternValues): string {
  if (node.type === 'text') return node.text;
  if (node.type === 'placeholder') return placeholderValue(node, values, 'keep');
  const complete = node.primary.every((n) => n.type === 'text' || !isBlank(values[n.name]));
  if (complete) return renderInline(node.primary, values, 'empty');
  return node.fallback ? renderInline(node.fallback, values, 'empty') : '';
}

/** A last path component `name.ext` cut to 245 bytes, keeping the extension whole when it is reasonably short. */
export function truncateFileName(fileName: string): string {
  const dot = fileName.lastIndexOf('.');
  if (dot <= 0) return truncateUtf8(fileName, LIMITS.component);
  const extension = fileName.slice(dot);
  const extBytes = utf8Length(extension);
  if (extBytes > LIMITS.extension) return truncateUtf8(fileName, LIMITS.component);
  const name = fileName.slice(0, dot);
  return utf8Length(name) > LIMITS.component - extBytes ? truncateUtf8(name, LIMITS.component - extBytes) + extension : fileName;
}

/** Drops empty components, cuts each to 245 bytes and strips trailing dots from folder names (never from folder audiobooks). */
function finalizePath(path: string, folderBased: boolean): string {
  const components = path.split('/');
  while (components.length > 0 && components[components.length - 1] === '') components.pop();
  const out: string[] = [];
  components.forEach((component, i) => {
    if (component === '') return;
    const last = i === components.length - 1;
    if (last && !folderBased && component.includes('.')) {
      out.push(truncateFileName(component));
      return;
    }
    let c = truncateUtf8(component, LIMITS.component);
    if (!folderBased) c = c.replace(/\.+$/, '');
    // A folder made only of dots (`..`) is dropped rather than kept as an empty component.
    if (c !== '') out.push(c);
  });
  return out.join('/');
}

function isExtensionOnly(value: string): boolean {
  const trimmed = value.trim();
  return trimmed.startsWith('.') && trimmed.length > 1 && trimmed.indexOf('/', 1) === -1;
}

/**
 * Renders `pattern` for one file. The result is relative (`/`-separated, no leading slash) and may be empty only
 * when the file name itself is empty. A blank pattern gives the current file name unchanged.
 */
export function renderPath(pattern: string | ParsedPattern | null | undefined, facts: BookFacts): string {
  const source = typeof pattern === 'string' || pattern === null || pattern === undefined ? pattern : pattern.source;
  const fileName = facts.fileName.trim();
  if (source === null || source === undefined || isBlank(source)) return fileName;
  const parsed = typeof pattern === 'object' && pattern !== null ? pattern : parsePattern(source);
  const folderBased = facts.folderBased ?? false;
  const values = patternValues(facts);

  let result = parsed.nodes.map((n) => renderNode(n, values)).join('');
  let fellBack = false;
  if (isBlank(result) || isExtensionOnly(result)) {
    result = fileName;
    fellBack = true;
  }
  const namesExtension = source.includes('{extension}') || source.includes('{currentFilename}');
  if (!folderBased && !fellBack && !namesExtension && values.extension !== '') result += `.${values.extension}`;
  return finalizePath(result, folderBased);
}

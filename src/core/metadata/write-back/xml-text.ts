// Raw XML text surgery: finds elements and the top-level children of one element as byte-exact spans of the source,
// so a writer can replace a few children and keep everything else exactly as it was written.
import { FormatError } from '../../formats/errors.ts';

export interface XmlElementSpan {
  /** Qualified name as written (`dc:title`, `opf:metadata`). */
  name: string;
  /** Attributes by qualified name, values decoded. */
  attrs: Map<string, string>;
  start: number;
  /** Just past the start tag. */
  openEnd: number;
  /** Start of the end tag (equals `end` for a self-closing element). */
  closeStart: number;
  end: number;
  selfClosing: boolean;
}

export type XmlChild =
  | { kind: 'element'; element: XmlElementSpan; start: number; end: number }
  | { kind: 'text' | 'comment' | 'cdata' | 'pi'; start: number; end: number };

export function localNameOf(qualified: string): string {
  const i = qualified.indexOf(':');
  return i === -1 ? qualified : qualified.slice(i + 1);
}

export function prefixOf(qualified: string): string {
  const i = qualified.indexOf(':');
  return i === -1 ? '' : qualified.slice(0, i + 1);
}

export function escapeText(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function escapeAttr(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');
}

/** XML characters that may appear in a document: control characters other than tab and line ends are not. */
export function xmlSafe(value: string): string {
  // eslint-disable-next-line no-control-regex
  return value.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '');
}

export function decodeEntities(value: string): string {
  return value.replace(/&(#x[0-9a-f]+|#\d+|lt|gt|amp|quot|apos);/gi, (whole, ref: string) => {
    const lower = ref.toLowerCase();
    if (lower === 'lt') return '<';
    if (lower === 'gt') return '>';
    if (lower === 'amp') return '&';
    if (lower === 'quot') return '"';
    if (lower === 'apos') return "'";
    const code = lower.startsWith('#x') ? Number.parseInt(lower.slice(2), 16) : Number.parseInt(lower.slice(1), 10);
    return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

const ATTRIBUTE = /([^\s=/>]+)\s*=\s*("([^"]*)"|'([^']*)')/g;

function parseAttributes(raw: string): Map<string, string> {
  const attrs = new Map<string, string>();
  for (const m of raw.matchAll(ATTRIBUTE)) attrs.set(m[1] as string, decodeEntities(m[3] ?? m[4] ?? ''));
  return attrs;
}

type Token =
  | { type: 'open' | 'selfclose'; name: string; attrsRaw: string; start: number; end: number }
  | { type: 'close'; name: string; start: number; end: number }
  | { type: 'text' | 'comment' | 'cdata' | 'pi' | 'doctype'; start: number; end: number };

function indexOrFail(xml: string, needle: string, from: number, what: string): number {
  const at = xml.indexOf(needle, from);
  if (at === -1) throw new FormatError('CORRUPT', `unterminated ${what} in XML`);
  return at;
}

/** The tag or text starting at `i`. */
function tokenAt(xml: string, i: number): Token {
  if (xml[i] !== '<') {
    const next = xml.indexOf('<', i);
    return { type: 'text', start: i, end: next === -1 ? xml.length : next };
  }
  if (xml.startsWith('<!--', i)) return { type: 'comment', start: i, end: indexOrFail(xml, '-->', i + 4, 'comment') + 3 };
  if (xml.startsWith('<![CDATA[', i)) return { type: 'cdata', start: i, end: indexOrFail(xml, ']]>', i + 9, 'CDATA section') + 3 };
  if (xml.startsWith('<?', i)) return { type: 'pi', start: i, end: indexOrFail(xml, '?>', i + 2, 'processing instruction') + 2 };
  if (xml.startsWith('<!', i)) {
    // A DOCTYPE, possibly with an internal subset in brackets.
    let depth = 0;
    for (let j = i + 2; j < xml.length; j++) {
      const c = xml[j];
      if (c === '[') depth++;
      else if (c === ']') depth--;
      else if (c === '>' && depth <= 0) return { type: 'doctype', start: i, end: j + 1 };
    }
    throw new FormatError('CORRUPT', 'unterminated DOCTYPE in XML');
  }
  // A start or end tag: scan to the closing '>' outside quoted attribute values.
  let quote: string | undefined;
  let j = i + 1;
  for (; j < xml.length; j++) {
    const c = xml[j];
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '>') break;
  }
  if (j >= xml.length) throw new FormatError('CORRUPT', 'unterminated tag in XML');
  const inner = xml.slice(i + 1, j);
  if (inner.startsWith('/')) return { type: 'close', name: inner.slice(1).trim(), start: i, end: j + 1 };
  const selfClosing = inner.endsWith('/');
  const body = selfClosing ? inner.slice(0, -1) : inner;
  const nameMatch = /^[^\s/>]+/.exec(body);
  if (!nameMatch) throw new FormatError('CORRUPT', 'a tag without a name in XML');
  return { type: selfClosing ? 'selfclose' : 'open', name: nameMatch[0], attrsRaw: body.slice(nameMatch[0].length), start: i, end: j + 1 };
}

/** The element whose start tag begins at `start`, through its matching end tag. */
export function elementAt(xml: string, start: number): XmlElementSpan {
  const first = tokenAt(xml, start);
  if (first.type !== 'open' && first.type !== 'selfclose') throw new FormatError('CORRUPT', 'expected an element start tag in XML');
  const attrs = parseAttributes(first.attrsRaw);
  if (first.type === 'selfclose') return { name: first.name, attrs, start, openEnd: first.end, closeStart: first.end, end: first.end, selfClosing: true };
  let depth = 1;
  let i = first.end;
  while (i < xml.length) {
    const token = tokenAt(xml, i);
    if (token.type === 'open') depth++;
    else if (token.type === 'close') {
      depth--;
      if (depth === 0) {
        if (token.name !== first.name) throw new FormatError('CORRUPT', `<${first.name}> is closed by </${token.name}>`);
        return { name: first.name, attrs, start, openEnd: first.end, closeStart: token.start, end: token.end, selfClosing: false };
      }
    }
    i = token.end;
  }
  throw new FormatError('CORRUPT', `<${first.name}> is never closed`);
}

/** The first element (in document order) whose local name is `local`, searching from `from`. */
export function findElement(xml: string, local: string, from = 0, to = xml.length): XmlElementSpan | undefined {
  let i = from;
  while (i < to) {
    const token = tokenAt(xml, i);
    if ((token.type === 'open' || token.type === 'selfclose') && localNameOf(token.name) === local) return elementAt(xml, token.start);
    i = token.end;
  }
  return undefined;
}

/** The top-level children of an element's content, in order, as spans of the source. */
export function childrenOf(xml: string, parent: XmlElementSpan): XmlChild[] {
  const out: XmlChild[] = [];
  let i = parent.openEnd;
  while (i < parent.closeStart) {
    const token = tokenAt(xml, i);
    if (token.type === 'open' || token.type === 'selfclose') {
      const element = elementAt(xml, token.start);
      if (element.end > parent.closeStart) throw new FormatError('CORRUPT', `<${element.name}> runs past its parent`);
      out.push({ kind: 'element', element, start: element.start, end: element.end });
      i = element.end;
      continue;
    }
    if (token.type === 'close') throw new FormatError('CORRUPT', `unexpected </${token.name}> in XML`);
    const kind = token.type === 'doctype' ? 'pi' : token.type;
    out.push({ kind, start: token.start, end: Math.min(token.end, parent.closeStart) });
    i = token.end;
  }
  return out;
}

/** The decoded text of an element's content (CDATA kept, tags dropped). */
export function textOf(xml: string, element: XmlElementSpan): string {
  let out = '';
  let i = element.openEnd;
  while (i < element.closeStart) {
    const token = tokenAt(xml, i);
    if (token.type === 'text') out += decodeEntities(xml.slice(token.start, Math.min(token.end, element.closeStart)));
    else if (token.type === 'cdata') out += xml.slice(token.start + 9, token.end - 3);
    i = token.end;
  }
  return out.trim();
}

/** Namespace prefix (with colon, '' for the default namespace) bound to `uri` by xmlns attributes of the elements given. */
export function prefixFor(uri: string, ...elements: (XmlElementSpan | undefined)[]): string | undefined {
  for (const element of elements) {
    if (!element) continue;
    for (const [name, value] of element.attrs) {
      if (value !== uri) continue;
      if (name === 'xmlns') return '';
      if (name.startsWith('xmlns:')) return `${name.slice(6)}:`;
    }
  }
  return undefined;
}

/** A child's content split into the elements it holds and the whitespace before each. */
export interface LaidOutChild {
  child: XmlChild;
  /** Whitespace (and only whitespace) written just before this child. */
  lead: string;
}

/**
 * Children with the whitespace before each attached to it; `tail` is the whitespace before the end tag. Text that is
 * not whitespace becomes a child of its own, so nothing is ever lost.
 */
export function layOut(xml: string, children: XmlChild[]): { items: LaidOutChild[]; tail: string } {
  const items: LaidOutChild[] = [];
  let pending = '';
  for (const child of children) {
    const raw = xml.slice(child.start, child.end);
    if (child.kind === 'text' && /^\s*$/.test(raw)) {
      pending += raw;
      continue;
    }
    items.push({ child, lead: pending });
    pending = '';
  }
  return { items, tail: pending };
}

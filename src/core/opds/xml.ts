// A small XML writer: every text node and attribute value goes through one escaping path, names are checked, and
// characters XML 1.0 cannot carry at all (most C0 controls, lone surrogates, U+FFFE/U+FFFF) are dropped, since book
// metadata read from files sometimes holds them and a single one makes the whole document unparsable.

const NAME = /^[A-Za-z_][A-Za-z0-9_.-]*(:[A-Za-z_][A-Za-z0-9_.-]*)?$/;

// Tab, LF and CR are the only C0 characters XML 1.0 allows; surrogates are legal only in pairs.
// eslint-disable-next-line no-control-regex -- matching control characters is the point of this pattern
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

// The same without the global flag, to test (a global pattern's test() moves its lastIndex).
// eslint-disable-next-line no-control-regex -- as above
const HAS_NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const TEXT_SPECIAL = /[&<>]/;
const TEXT_SPECIALS = /[&<>]/g;
const ATTRIBUTE_SPECIAL = /[&<>"\t\n\r]/;
const ATTRIBUTE_SPECIALS = /[&<>"\t\n\r]/g;
const ENTITY: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '\t': '&#9;', '\n': '&#10;', '\r': '&#13;' };
const entity = (c: string): string => ENTITY[c] as string;

// A feed escapes a few thousand values, nearly all plain: one test finds any character that needs a closer look (a
// special character, one XML cannot carry, or a surrogate, paired or not), and only those values are copied.
// eslint-disable-next-line no-control-regex -- matching control characters is the point of these patterns
const TEXT_SUSPECT = /[\u0000-\u0008\u000B\u000C\u000E-\u001F&<>\uD800-\uDFFF\uFFFE\uFFFF]/;
// eslint-disable-next-line no-control-regex -- as above
const ATTRIBUTE_SUSPECT = /[\u0000-\u001F&<>"\uD800-\uDFFF\uFFFE\uFFFF]/;

/** The text without the characters an XML 1.0 document cannot contain. */
export function xmlSafe(value: string): string {
  return HAS_NOT_XML.test(value) ? value.replace(NOT_XML, '') : value;
}

export function escapeText(value: string): string {
  if (!TEXT_SUSPECT.test(value)) return value;
  const safe = xmlSafe(value);
  return TEXT_SPECIAL.test(safe) ? safe.replace(TEXT_SPECIALS, entity) : safe;
}

/** Attribute values also keep their whitespace characters (a parser would normalise raw ones to spaces). */
export function escapeAttribute(value: string): string {
  if (!ATTRIBUTE_SUSPECT.test(value)) return value;
  const safe = xmlSafe(value);
  return ATTRIBUTE_SPECIAL.test(safe) ? safe.replace(ATTRIBUTE_SPECIALS, entity) : safe;
}

export type Attributes = Record<string, string | number | undefined>;

/** Names already checked: a feed uses a few dozen, thousands of times. */
const checkedNames = new Set<string>();

function checkName(name: string): string {
  if (checkedNames.has(name)) return name;
  if (!NAME.test(name)) throw new Error(`not an XML name: ${JSON.stringify(name)}`);
  if (checkedNames.size < 1024) checkedNames.add(name);
  return name;
}

/** A number is written as is: its digits, sign, point and exponent need no escaping. */
const valueText = (value: string | number): string => (typeof value === 'number' ? String(value) : escapeAttribute(value));

// The fixed text around names and values, made once per name: a line is then built from a few strings rather than a
// dozen small ones (a feed page has over a thousand lines, and every piece is an allocation).
const attributeStarts = new Map<string, string>();
const attributeStart = (name: string): string => attributeStarts.get(name) ?? (attributeStarts.set(name, ` ${checkName(name)}="`), attributeStarts.get(name) as string);

function attributes(attrs: Attributes | undefined): string {
  if (!attrs) return '';
  let out = '';
  for (const name in attrs) {
    const value = attrs[name];
    if (value === undefined) continue;
    out = out + attributeStart(name) + valueText(value) + '"';
  }
  return out;
}

interface Tags {
  /** Indentation and `<name`. */
  start: string;
  /** Indentation and `<name>`. */
  open: string;
  /** `</name>` and the line's end. */
  end: string;
  /** Indentation, `</name>` and the line's end. */
  close: string;
}

/** By depth, then element name. */
const tagsAt: Map<string, Tags>[] = [];

function tags(depth: number, name: string): Tags {
  let byName = tagsAt[depth];
  if (!byName) tagsAt[depth] = byName = new Map();
  let known = byName.get(name);
  if (!known) {
    const indent = '  '.repeat(depth);
    checkName(name);
    known = { start: `${indent}<${name}`, open: `${indent}<${name}>\n`, end: `</${name}>\n`, close: `${indent}</${name}>\n` };
    byName.set(name, known);
  }
  return known;
}

/** Builds a document as a list of lines, joined once at the end; elements must be closed in order. */
export class XmlWriter {
  readonly #lines: string[] = ['<?xml version="1.0" encoding="UTF-8"?>\n'];
  readonly #open: string[] = [];

  /** `<name attrs>`; children follow until `close()`. */
  open(name: string, attrs?: Attributes): this {
    const t = tags(this.#open.length, name);
    this.#lines.push(attrs ? `${t.start}${attributes(attrs)}>\n` : t.open);
    this.#open.push(name);
    return this;
  }

  close(): this {
    const name = this.#open.pop();
    if (name === undefined) throw new Error('no element to close');
    this.#lines.push(tags(this.#open.length, name).close);
    return this;
  }

  /** An element with text content, or empty (`<name/>`) when `text` is undefined. */
  leaf(name: string, text?: string | number, attrs?: Attributes): this {
    const t = tags(this.#open.length, name);
    const start = attrs ? t.start + attributes(attrs) : t.start;
    if (text === undefined) this.#lines.push(start + '/>\n');
    else this.#lines.push(start + '>' + (typeof text === 'number' ? String(text) : escapeText(text)) + t.end);
    return this;
  }

  /** Lines already written as XML (each ending with a line break) for elements at `depth`, the depth open now. */
  lines(depth: number, xml: string): this {
    if (depth !== this.#open.length) throw new Error(`lines for depth ${depth} written at depth ${this.#open.length}`);
    this.#lines.push(xml);
    return this;
  }

  toString(): string {
    if (this.#open.length > 0) throw new Error(`unclosed elements: ${this.#open.join(' > ')}`);
    return this.#lines.join('');
  }
}

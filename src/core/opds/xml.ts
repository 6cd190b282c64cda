// A small XML writer: every text node and attribute value goes through one escaping path, names are checked, and
// characters XML 1.0 cannot carry at all (most C0 controls, lone surrogates, U+FFFE/U+FFFF) are dropped, since book
// metadata read from files sometimes holds them and a single one makes the whole document unparsable.

const NAME = /^[A-Za-z_][A-Za-z0-9_.-]*(:[A-Za-z_][A-Za-z0-9_.-]*)?$/;

// Tab, LF and CR are the only C0 characters XML 1.0 allows; surrogates are legal only in pairs.
// eslint-disable-next-line no-control-regex -- matching control characters is the point of this pattern
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** The text without the characters an XML 1.0 document cannot contain. */
export function xmlSafe(value: string): string {
  return value.replace(NOT_XML, '');
}

export function escapeText(value: string): string {
  return xmlSafe(value).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Attribute values also keep their whitespace characters (a parser would normalise raw ones to spaces). */
export function escapeAttribute(value: string): string {
  return xmlSafe(value)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/\t/g, '&#9;')
    .replace(/\n/g, '&#10;')
    .replace(/\r/g, '&#13;');
}

export type Attributes = Record<string, string | number | undefined>;

function checkName(name: string): string {
  if (!NAME.test(name)) throw new Error(`not an XML name: ${JSON.stringify(name)}`);
  return name;
}

function attributes(attrs: Attributes | undefined): string {
  if (!attrs) return '';
  let out = '';
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined) continue;
    out += ` ${checkName(name)}="${escapeAttribute(String(value))}"`;
  }
  return out;
}

/** Builds a document as a list of string parts; elements must be closed in order. */
export class XmlWriter {
  readonly #parts: string[] = ['<?xml version="1.0" encoding="UTF-8"?>\n'];
  readonly #open: string[] = [];

  /** `<name attrs>`; children follow until `close()`. */
  open(name: string, attrs?: Attributes): this {
    this.#parts.push(`${'  '.repeat(this.#open.length)}<${checkName(name)}${attributes(attrs)}>\n`);
    this.#open.push(name);
    return this;
  }

  close(): this {
    const name = this.#open.pop();
    if (name === undefined) throw new Error('no element to close');
    this.#parts.push(`${'  '.repeat(this.#open.length)}</${name}>\n`);
    return this;
  }

  /** An element with text content, or empty (`<name/>`) when `text` is undefined. */
  leaf(name: string, text?: string | number, attrs?: Attributes): this {
    const indent = '  '.repeat(this.#open.length);
    checkName(name);
    if (text === undefined) this.#parts.push(`${indent}<${name}${attributes(attrs)}/>\n`);
    else this.#parts.push(`${indent}<${name}${attributes(attrs)}>${escapeText(String(text))}</${name}>\n`);
    return this;
  }

  toString(): string {
    if (this.#open.length > 0) throw new Error(`unclosed elements: ${this.#open.join(' > ')}`);
    return this.#parts.join('');
  }
}

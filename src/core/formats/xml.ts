// XML parsing for untrusted book metadata: no DTDs, no entity definitions, bounded size.
import { XMLParser } from 'fast-xml-parser';
import { FormatError } from './errors.ts';
import { LIMITS } from './limits.ts';

export type XmlNode = Record<string, unknown>;

const ENTITY_DECLARATION = /<!ENTITY/i;
const DOCTYPE = /<!DOCTYPE[^>[]*(\[[\s\S]*?\])?\s*>/i;

/**
 * Parses XML into plain objects. Attributes are prefixed with `@_`, text is `#text`, namespaces are kept in names
 * (callers match local names with {@link localName}). Any document that declares entities is refused; a plain
 * DOCTYPE line (FB2, XHTML) is dropped before parsing.
 */
export function parseXml(text: string, what: string): XmlNode {
  if (text.length > LIMITS.maxXmlBytes) throw new FormatError('TOO_LARGE', `${what} is larger than ${LIMITS.maxXmlBytes} bytes`);
  if (ENTITY_DECLARATION.test(text)) throw new FormatError('UNSAFE', `${what} declares XML entities, which are not allowed`);
  const body = text.replace(/^\uFEFF/, '').replace(DOCTYPE, '');
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@_',
    textNodeName: '#text',
    parseTagValue: false,
    parseAttributeValue: false,
    trimValues: true,
    processEntities: true,
    htmlEntities: false,
    isArray: () => true,
  });
  try {
    return parser.parse(body, true) as XmlNode;
  } catch (error) {
    if (error instanceof FormatError) throw error;
    const detail = error instanceof Error ? error.message : String(error);
    throw new FormatError('CORRUPT', `${what} is not well-formed XML: ${detail}`);
  }
}

/** `dc:title` → `title`, `opf:meta` → `meta`. */
export function localName(name: string): string {
  const i = name.indexOf(':');
  return i === -1 ? name : name.slice(i + 1);
}

/** Child elements (all parsed as arrays) whose local name matches, ignoring namespace prefixes. */
export function children(node: unknown, name: string): XmlNode[] {
  if (!node || typeof node !== 'object') return [];
  const out: XmlNode[] = [];
  for (const [key, value] of Object.entries(node as XmlNode)) {
    if (key.startsWith('@_') || key === '#text') continue;
    if (localName(key) !== name) continue;
    const list = Array.isArray(value) ? value : [value];
    for (const item of list) out.push(typeof item === 'object' && item !== null ? (item as XmlNode) : { '#text': item });
  }
  return out;
}

export function child(node: unknown, name: string): XmlNode | undefined {
  return children(node, name)[0];
}

/** Depth-first search for the first element with that local name. */
export function find(node: unknown, name: string): XmlNode | undefined {
  if (!node || typeof node !== 'object') return undefined;
  const direct = child(node, name);
  if (direct) return direct;
  for (const [key, value] of Object.entries(node as XmlNode)) {
    if (key.startsWith('@_') || key === '#text') continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      const hit = find(item, name);
      if (hit) return hit;
    }
  }
  return undefined;
}

/** The attribute value, matching by local name so `opf:role` and `role` both work. */
export function attr(node: XmlNode | undefined, name: string): string | undefined {
  if (!node) return undefined;
  for (const [key, value] of Object.entries(node)) {
    if (!key.startsWith('@_')) continue;
    if (localName(key.slice(2)) === name) return String(value);
  }
  return undefined;
}

/** All text inside an element, concatenated (mixed content included), trimmed; undefined when blank. */
export function text(node: unknown): string | undefined {
  const parts: string[] = [];
  const walk = (n: unknown): void => {
    if (n === null || n === undefined) return;
    if (typeof n !== 'object') {
      parts.push(String(n));
      return;
    }
    if (Array.isArray(n)) {
      n.forEach(walk);
      return;
    }
    for (const [key, value] of Object.entries(n as XmlNode)) {
      if (key.startsWith('@_')) continue;
      walk(value);
    }
  };
  walk(node);
  const joined = parts.join(' ').replace(/\s+/g, ' ').trim();
  return joined === '' ? undefined : joined;
}

// User SVG icons are hostile input: they are shown to every user, inline in the web UI. An icon is parsed as XML and
// written out again from an allow list: drawing elements and their attributes only. Gone are scripts, event handlers,
// <foreignObject>, animations (which can rewrite links), style sheets that load anything, and every reference that is
// not to a fragment of the icon itself (raster images may be embedded as data: URIs). DOCTYPEs and entity
// declarations are refused outright, as is anything that is not well-formed.
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { CodedError } from '../coded-error.ts';

export class SvgError extends CodedError<'INVALID'> {}

export const SVG_LIMITS = {
  /** Characters of SVG text (SvgIconCreateRequest's @Size). */
  chars: 1_048_576,
  /** Elements, and nesting depth. */
  elements: 50_000,
  depth: 64,
} as const;

const SVG_NS = 'http://www.w3.org/2000/svg';

/** Elements kept, with their allowed attributes and children; anything else is dropped with its content. */
const ELEMENTS: ReadonlySet<string> = new Set([
  'svg', 'g', 'defs', 'symbol', 'use', 'title', 'desc', 'switch',
  'path', 'rect', 'circle', 'ellipse', 'line', 'polyline', 'polygon',
  'text', 'tspan', 'textPath',
  'linearGradient', 'radialGradient', 'stop', 'pattern', 'clipPath', 'mask', 'marker', 'image', 'style',
  'filter', 'feBlend', 'feColorMatrix', 'feComponentTransfer', 'feComposite', 'feConvolveMatrix', 'feDiffuseLighting',
  'feDisplacementMap', 'feDistantLight', 'feDropShadow', 'feFlood', 'feFuncA', 'feFuncB', 'feFuncG', 'feFuncR',
  'feGaussianBlur', 'feMerge', 'feMergeNode', 'feMorphology', 'feOffset', 'fePointLight', 'feSpecularLighting',
  'feSpotLight', 'feTile', 'feTurbulence',
]);

/** Elements that are left out but whose children are kept: a link is dropped, its drawing stays. */
const UNWRAPPED: ReadonlySet<string> = new Set(['a']);

/** Namespaced attributes kept (`xlink:href` becomes `href`); every other prefixed attribute is dropped. */
const PREFIXED: ReadonlySet<string> = new Set(['xml:space', 'xml:lang']);

const ATTRIBUTE_NAME = /^[A-Za-z_][A-Za-z0-9_.:-]*$/;
const FRAGMENT = /^#[A-Za-z_][A-Za-z0-9_.:-]*$/;
const RASTER_DATA = /^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]*$/;
/** Any `url(` whose target is not `#fragment`, however quoted. */
const FOREIGN_URL = /url\s*\(\s*(?!['"]?\s*#)/i;
const SCRIPT_SCHEME = /(java|vb)script\s*:|data\s*:/i;
/** CSS that can load, run or hide something: imports, old IE expressions and bindings, and escapes that could hide them. */
const UNSAFE_CSS = /@import|@font-face|expression\s*\(|image-set\s*\(|\bsrc\s*\(|behavior\s*:|-moz-binding|\\/i;

const XML_ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** Decodes the five XML entities and character references; any other entity is undefined (there is no DTD). */
function decode(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|[A-Za-z][A-Za-z0-9]*);/g, (_all, ref: string) => {
    if (ref.startsWith('#')) {
      const code = ref[1] === 'x' ? Number.parseInt(ref.slice(2), 16) : Number.parseInt(ref.slice(1), 10);
      if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) throw new SvgError('INVALID', `Invalid SVG format: invalid character reference &${ref};`);
      return String.fromCodePoint(code);
    }
    const known = XML_ENTITIES[ref];
    if (known === undefined) throw new SvgError('INVALID', `Invalid SVG format: undefined entity &${ref};`);
    return known;
  });
}

const escapeText = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const escapeAttribute = (text: string): string => escapeText(text).replace(/"/g, '&quot;').replace(/\r/g, '&#13;').replace(/\n/g, '&#10;').replace(/\t/g, '&#9;');

const cssIsSafe = (css: string): boolean => !UNSAFE_CSS.test(css) && !FOREIGN_URL.test(css) && !SCRIPT_SCHEME.test(css);

/** The attribute as it may be written out, or undefined to drop it. */
function keptAttribute(element: string, rawName: string, rawValue: unknown): [string, string] | undefined {
  if (!ATTRIBUTE_NAME.test(rawName) || typeof rawValue !== 'string') return undefined;
  const value = decode(rawValue);
  let name = rawName;
  if (name === 'xlink:href') name = 'href';
  else if (name.includes(':') && !PREFIXED.has(name)) return undefined;
  const lower = name.toLowerCase();
  if (lower.startsWith('on') || lower === 'xmlns') return undefined;
  if (lower === 'href' || lower === 'src') {
    const target = value.trim();
    if (FRAGMENT.test(target) && element !== 'image') return [name, target];
    if (element === 'image' && RASTER_DATA.test(target)) return [name, target.replace(/\s+/g, '')];
    return undefined;
  }
  if (lower === 'style') return cssIsSafe(value) ? [name, value] : undefined;
  if (FOREIGN_URL.test(value) || SCRIPT_SCHEME.test(value)) return undefined;
  return [name, value];
}

type XmlItem = Record<string, unknown>;

class Writer {
  out: string[] = [];
  elements = 0;

  children(element: string, items: unknown, depth: number): void {
    if (!Array.isArray(items)) return;
    for (const item of items as XmlItem[]) {
      if ('#text' in item) {
        this.out.push(escapeText(decode(String(item['#text']))));
        continue;
      }
      if ('#cdata' in item) {
        // Character data is written as escaped text; only a style element's text is CSS.
        const text = ((item['#cdata'] as XmlItem[] | undefined) ?? []).map((t) => String(t['#text'] ?? '')).join('');
        this.out.push(escapeText(element === 'style' && !cssIsSafe(text) ? '' : text));
        continue;
      }
      const name = Object.keys(item).find((k) => k !== ':@');
      if (name === undefined || name.startsWith('?') || name === '#comment') continue;
      this.element(name, item, depth + 1);
    }
  }

  element(name: string, item: XmlItem, depth: number): void {
    if (++this.elements > SVG_LIMITS.elements) throw new SvgError('INVALID', `Invalid SVG format: more than ${SVG_LIMITS.elements} elements`);
    if (depth > SVG_LIMITS.depth) throw new SvgError('INVALID', `Invalid SVG format: elements nested deeper than ${SVG_LIMITS.depth} levels`);
    if (UNWRAPPED.has(name)) return this.children(name, item[name], depth);
    if (!ELEMENTS.has(name)) return;
    if (name === 'style' && !this.styleIsSafe(item[name])) return;
    if (name === 'image' && !this.imageIsEmbedded(item)) return;
    const attributes: string[] = depth === 0 ? [` xmlns="${SVG_NS}"`] : [];
    // `href` and `xlink:href` both become `href`: the first one wins.
    const seen = new Set<string>();
    for (const [rawName, rawValue] of Object.entries((item[':@'] as XmlItem | undefined) ?? {})) {
      const kept = keptAttribute(name, rawName, rawValue);
      if (!kept || seen.has(kept[0])) continue;
      seen.add(kept[0]);
      attributes.push(` ${kept[0]}="${escapeAttribute(kept[1])}"`);
    }
    const start = this.out.length;
    this.out.push(`<${name}${attributes.join('')}>`);
    const before = this.out.length;
    this.children(name, item[name], depth);
    if (this.out.length === before) this.out[start] = `<${name}${attributes.join('')}/>`;
    else this.out.push(`</${name}>`);
  }

  private styleIsSafe(items: unknown): boolean {
    const text = (Array.isArray(items) ? (items as XmlItem[]) : [])
      .map((i) => ('#text' in i ? decode(String(i['#text'])) : '#cdata' in i ? ((i['#cdata'] as XmlItem[]) ?? []).map((t) => String(t['#text'] ?? '')).join('') : '\u0000'))
      .join('');
    return !text.includes('\u0000') && cssIsSafe(text);
  }

  private imageIsEmbedded(item: XmlItem): boolean {
    const attributes = (item[':@'] as XmlItem | undefined) ?? {};
    const href = attributes.href ?? attributes['xlink:href'];
    return typeof href === 'string' && RASTER_DATA.test(decode(href).trim());
  }
}

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  allowBooleanAttributes: false,
  processEntities: false,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  commentPropName: '#comment',
  cdataPropName: '#cdata',
});

/**
 * The icon as it may be stored and served, or SvgError (its message says why, in Grimmory's words where Grimmory has
 * them). The same input always gives the same output, and the output is a fixed point.
 */
export function sanitizeSvg(svg: string): string {
  if (svg.trim() === '') throw new SvgError('INVALID', 'SVG data cannot be empty');
  if (svg.length > SVG_LIMITS.chars) throw new SvgError('INVALID', `Invalid SVG format: larger than ${SVG_LIMITS.chars} characters`);
  const text = svg.replace(/^\uFEFF/, '').trim();
  if (!text.startsWith('<svg') && !text.startsWith('<?xml')) throw new SvgError('INVALID', 'Invalid SVG format: must start with <svg or <?xml');
  if (!text.includes('</svg>') && !/<svg\b[^>]*\/>/.test(text)) throw new SvgError('INVALID', 'Invalid SVG format: missing closing </svg> tag');
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) throw new SvgError('INVALID', 'Invalid SVG format: DOCTYPE and entity declarations are not allowed');
  const valid = XMLValidator.validate(text, { allowBooleanAttributes: false });
  if (valid !== true) throw new SvgError('INVALID', `Invalid SVG format: ${valid.err.msg} (line ${valid.err.line})`);
  let items: XmlItem[];
  try {
    items = parser.parse(text) as XmlItem[];
  } catch (error) {
    throw new SvgError('INVALID', `Invalid SVG format: ${(error as Error).message}`);
  }
  const roots = items.filter((i) => !('#text' in i) && !('#comment' in i) && !Object.keys(i).some((k) => k.startsWith('?')));
  const root = roots[0];
  if (roots.length !== 1 || !root || !('svg' in root)) throw new SvgError('INVALID', 'Invalid SVG format: the root element must be <svg>');
  const writer = new Writer();
  writer.element('svg', root, 0);
  return writer.out.join('');
}

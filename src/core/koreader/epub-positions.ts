// Positions inside an EPUB in the two notations that meet here: KOReader's XPointers (crengine's DOM paths, e.g.
// `/body/DocFragment[11]/body/div/p[7]/text().123`) and the EPUB CFIs of the web reader (`epubcfi(/6/22!/4/2/14/1:123)`).
//
// Both name a spine item and a path through its XHTML, so a position is carried from one to the other through the
// chapter's own DOM. The mapping is as good as the two DOMs agree: crengine drops whitespace-only text between
// blocks and collapses runs of white space, and this module models that; anything it cannot follow is cut back to
// the deepest element both sides know, and to nothing when even the chapter is unknown.
import { XMLParser } from 'fast-xml-parser';
import { isDocumentItem, parsePackage, type EpubPackage, type ManifestItem } from '../formats/epub-package.ts';
import { resolveHref } from '../formats/epub-paths.ts';
import { LIMITS } from '../formats/limits.ts';
import { attr, children, find, parseXml } from '../formats/xml.ts';
import { withZip, type ZipArchive } from '../formats/zip.ts';

interface ElementNode {
  kind: 'element';
  name: string;
  children: DomNode[];
}

interface TextNode {
  kind: 'text';
  text: string;
}

type DomNode = ElementNode | TextNode;

// ---------------------------------------------------------------------------------------------------------------
// The chapter DOM

const ENTITY_DECLARATION = /<!ENTITY/i;
const DOCTYPE = /<!DOCTYPE[^>[]*(\[[\s\S]*?\])?\s*>/i;

function localName(name: string): string {
  const i = name.indexOf(':');
  return (i === -1 ? name : name.slice(i + 1)).toLowerCase();
}

function toNodes(list: unknown): DomNode[] {
  const out: DomNode[] = [];
  if (!Array.isArray(list)) return out;
  for (const item of list as Record<string, unknown>[]) {
    for (const [key, value] of Object.entries(item)) {
      if (key === ':@') continue;
      if (key === '#text') {
        const text = String(value);
        // Adjacent character data (split by a comment or CDATA) is one run, for CFIs and for crengine alike.
        const last = out.at(-1);
        if (last?.kind === 'text') last.text += text;
        else out.push({ kind: 'text', text });
      } else {
        out.push({ kind: 'element', name: localName(key), children: toNodes(value) });
      }
    }
  }
  return out;
}

/** The document element of an XHTML chapter; undefined when it is not well-formed enough to walk. */
export function parseChapter(xhtml: string): ElementNode | undefined {
  if (xhtml.length > LIMITS.maxXmlBytes || ENTITY_DECLARATION.test(xhtml)) return undefined;
  const parser = new XMLParser({
    preserveOrder: true,
    ignoreAttributes: true,
    trimValues: false,
    parseTagValue: false,
    processEntities: true,
    htmlEntities: true,
    ignoreDeclaration: true,
    ignorePiTags: true,
  });
  try {
    const nodes = toNodes(parser.parse(xhtml.replace(/^\uFEFF/, '').replace(DOCTYPE, '')));
    return nodes.find((n): n is ElementNode => n.kind === 'element');
  } catch {
    return undefined;
  }
}

const elements = (node: ElementNode): ElementNode[] => node.children.filter((c): c is ElementNode => c.kind === 'element');
const isBlank = (text: string): boolean => !/[^ \t\r\n]/.test(text);

/**
 * The text runs crengine keeps as nodes under this element: all of them where the element has text of its own
 * (inline context, where a lone space separates words), none of the blank ones where it only holds blocks.
 */
function crengineTexts(node: ElementNode): TextNode[] {
  const texts = node.children.filter((c): c is TextNode => c.kind === 'text');
  return texts.some((t) => !isBlank(t.text)) ? texts : [];
}

/** Offset in crengine's text (white space runs collapsed to one space) → offset in the source text, and back. */
function sourceOffset(text: string, collapsed: number): number {
  let seen = 0;
  for (let i = 0; i < text.length; i++) {
    if (seen >= collapsed) return i;
    if (/[ \t\r\n]/.test(text[i] ?? '')) while (i + 1 < text.length && /[ \t\r\n]/.test(text[i + 1] ?? '')) i++;
    seen++;
  }
  return text.length;
}

function collapsedOffset(text: string, source: number): number {
  return text.slice(0, Math.max(0, Math.min(source, text.length))).replace(/[ \t\r\n]+/g, ' ').length;
}

// ---------------------------------------------------------------------------------------------------------------
// XPointers

interface XPointerStep {
  name: string;
  index: number;
}

export interface ParsedXPointer {
  /** 0-based spine index (DocFragment[n] is spine item n-1). */
  spineIndex: number;
  /** Element steps below the chapter's <body>. */
  steps: XPointerStep[];
  /** `text()[n]` as a 1-based index among the element's text nodes, when the position is inside text. */
  textIndex: number | undefined;
  offset: number;
}

const STEP = /^([A-Za-z_][\w.-]*(?::[\w.-]+)?)(?:\[(\d+)\])?$/;

export function parseXPointer(xpointer: string): ParsedXPointer | undefined {
  const head = /^\/body\/DocFragment(?:\[(\d+)\])?(\/.*)?$/.exec(xpointer.trim());
  if (!head) return undefined;
  const spineIndex = Number(head[1] ?? '1') - 1;
  if (spineIndex < 0) return undefined;
  let rest = head[2] ?? '';
  let offset = 0;
  const tail = /\.(\d+)$/.exec(rest);
  if (tail) {
    offset = Number(tail[1]);
    rest = rest.slice(0, tail.index);
  }
  const segments = rest.split('/').filter(Boolean);
  if (segments.length > 0 && localName(segments[0] ?? '') !== 'body') return undefined;
  const steps: XPointerStep[] = [];
  let textIndex: number | undefined;
  for (const [i, segment] of segments.slice(1).entries()) {
    const text = /^text\(\)(?:\[(\d+)\])?$/.exec(segment);
    if (text) {
      if (i !== segments.length - 2) return undefined;
      textIndex = Number(text[1] ?? '1');
      continue;
    }
    const step = STEP.exec(segment);
    if (!step) return undefined;
    steps.push({ name: localName(step[1] ?? ''), index: Number(step[2] ?? '1') });
  }
  return { spineIndex, steps, textIndex, offset };
}

// ---------------------------------------------------------------------------------------------------------------
// CFIs

export interface ParsedCfi {
  spineIndex: number;
  /** Child indexes below the document element (even: element, odd: text run). */
  steps: number[];
  offset: number | undefined;
}

/** Splits a CFI path into `/n[assertion]` steps and an optional `:offset`, honouring `^` escapes inside brackets. */
function cfiSteps(path: string): { steps: number[]; offset: number | undefined } | undefined {
  const steps: number[] = [];
  let offset: number | undefined;
  let i = 0;
  const skipBracket = (): void => {
    if (path[i] !== '[') return;
    i++;
    while (i < path.length && path[i] !== ']') i += path[i] === '^' ? 2 : 1;
    i++;
  };
  while (i < path.length) {
    const c = path[i];
    if (c === '/') {
      const m = /^\/(\d+)/.exec(path.slice(i));
      if (!m) return undefined;
      steps.push(Number(m[1]));
      i += m[0].length;
      skipBracket();
    } else if (c === ':') {
      const m = /^:(\d+)/.exec(path.slice(i));
      if (!m) return undefined;
      offset = Number(m[1]);
      i += m[0].length;
      skipBracket();
      break;
    } else if (c === '~' || c === '@' || c === '[') {
      break;
    } else {
      return undefined;
    }
  }
  return { steps, offset };
}

export function parseCfi(cfi: string): ParsedCfi | undefined {
  const body = /^epubcfi\((.*)\)$/.exec(cfi.trim())?.[1];
  if (!body) return undefined;
  // A range `base,start,end` starts where `base + start` points.
  const [base = '', start = ''] = body.split(',');
  const [packagePart = '', documentPart = ''] = (base + start).split('!');
  const pkg = cfiSteps(packagePart);
  const doc = cfiSteps(documentPart);
  const spineStep = pkg?.steps[1];
  if (!pkg || !doc || spineStep === undefined || spineStep < 2 || spineStep % 2 !== 0) return undefined;
  return { spineIndex: spineStep / 2 - 1, steps: doc.steps, offset: doc.offset };
}

// ---------------------------------------------------------------------------------------------------------------
// Conversions within one chapter

function bodyOf(root: ElementNode): { body: ElementNode; step: number } | undefined {
  const list = elements(root);
  const i = list.findIndex((e) => e.name === 'body');
  const body = list[i];
  return body ? { body, step: 2 * (i + 1) } : undefined;
}

/** CFI steps and offset for a parsed XPointer, walked through the chapter DOM. */
export function xpointerToCfiSteps(root: ElementNode, xp: ParsedXPointer): { steps: number[]; offset: number | undefined } | undefined {
  const start = bodyOf(root);
  if (!start) return undefined;
  const steps = [start.step];
  let node = start.body;
  for (const step of xp.steps) {
    const list = elements(node);
    let seen = 0;
    const at = list.findIndex((e) => e.name === step.name && ++seen === step.index);
    const next = list[at];
    if (!next) return { steps, offset: undefined };
    steps.push(2 * (at + 1));
    node = next;
  }
  if (xp.textIndex === undefined) return { steps, offset: undefined };
  const target = crengineTexts(node)[xp.textIndex - 1];
  if (!target) return { steps, offset: undefined };
  let before = 0;
  for (const child of node.children) {
    if (child === target) break;
    if (child.kind === 'element') before++;
  }
  steps.push(2 * before + 1);
  return { steps, offset: Math.min(sourceOffset(target.text, xp.offset), target.text.length) };
}

/** XPointer path (below `/body/DocFragment[n]`) for CFI steps, walked through the chapter DOM. */
export function cfiToXPointerPath(root: ElementNode, cfi: ParsedCfi): string | undefined {
  const start = bodyOf(root);
  if (!start || cfi.steps[0] !== start.step) return undefined;
  let path = '/body';
  let node = start.body;
  let rest = cfi.steps.slice(1);
  while (rest.length > 0) {
    const step = rest[0] ?? 0;
    if (step % 2 === 1) break;
    const list = elements(node);
    const next = list[step / 2 - 1];
    if (!next) break;
    const sameName = list.filter((e) => e.name === next.name);
    path += sameName.length > 1 ? `/${next.name}[${sameName.indexOf(next) + 1}]` : `/${next.name}`;
    node = next;
    rest = rest.slice(1);
  }
  const textStep = rest[0];
  if (rest.length === 1 && textStep !== undefined && textStep % 2 === 1) {
    // The run after (textStep - 1) / 2 elements.
    const elementsBefore = (textStep - 1) / 2;
    let count = 0;
    let target: TextNode | undefined;
    for (const child of node.children) {
      if (child.kind === 'element') {
        if (++count > elementsBefore) break;
      } else if (count === elementsBefore) {
        target = child;
      }
    }
    const texts = crengineTexts(node);
    const index = target ? texts.indexOf(target) : -1;
    if (target && index !== -1) {
      const suffix = texts.length > 1 ? `[${index + 1}]` : '';
      return `${path}/text()${suffix}.${collapsedOffset(target.text, cfi.offset ?? 0)}`;
    }
  }
  return `${path}.0`;
}

// ---------------------------------------------------------------------------------------------------------------
// Books

async function locateOpf(zip: ZipArchive): Promise<string | undefined> {
  const entry = zip.find('META-INF/container.xml');
  if (entry) {
    try {
      const container = parseXml(await zip.readText(entry.name), 'container.xml');
      const rootfiles = children(find(container, 'rootfiles'), 'rootfile');
      const preferred = rootfiles.find((r) => attr(r, 'media-type') === 'application/oebps-package+xml') ?? rootfiles[0];
      const declared = zip.find(resolveHref('', attr(preferred, 'full-path')) ?? '');
      if (declared && !declared.isDirectory) return declared.name;
    } catch {
      // fall through to any OPF in the archive
    }
  }
  return zip.entries.find((e) => !e.isDirectory && e.name.toLowerCase().endsWith('.opf'))?.name;
}

async function withChapter<T>(epubPath: string, spineIndex: number, work: (root: ElementNode, item: ManifestItem, pkg: EpubPackage) => T | undefined): Promise<T | undefined> {
  try {
    return await withZip(epubPath, async (zip) => {
      const opfPath = await locateOpf(zip);
      if (!opfPath) return undefined;
      const pkg = parsePackage(opfPath, await zip.readText(opfPath));
      const item = pkg.spine[spineIndex];
      const entry = item?.path ? zip.find(item.path) : undefined;
      if (!item || !entry || !isDocumentItem(item)) return undefined;
      const root = parseChapter(await zip.readText(entry.name));
      return root ? work(root, item, pkg) : undefined;
    });
  } catch {
    return undefined;
  }
}

function formatCfi(spineIndex: number, steps: number[], offset: number | undefined): string {
  return `epubcfi(/6/${2 * (spineIndex + 1)}!${steps.map((s) => `/${s}`).join('')}${offset === undefined ? '' : `:${offset}`})`;
}

/** The web reader's CFI for a KOReader XPointer into this EPUB; undefined when the chapter cannot be found. */
export async function xpointerToCfi(epubPath: string, xpointer: string): Promise<string | undefined> {
  const xp = parseXPointer(xpointer);
  if (!xp) return undefined;
  return withChapter(epubPath, xp.spineIndex, (root) => {
    const walked = xpointerToCfiSteps(root, xp);
    return walked ? formatCfi(xp.spineIndex, walked.steps, walked.offset) : undefined;
  });
}

/** A KOReader XPointer for a web reader CFI into this EPUB; undefined when the chapter cannot be found. */
export async function cfiToXPointer(epubPath: string, cfi: string): Promise<string | undefined> {
  const parsed = parseCfi(cfi);
  if (!parsed) return undefined;
  return withChapter(epubPath, parsed.spineIndex, (root, _item, pkg) => {
    const path = cfiToXPointerPath(root, parsed) ?? '/body.0';
    const fragment = pkg.spine.length > 1 ? `DocFragment[${parsed.spineIndex + 1}]` : 'DocFragment';
    return `/body/${fragment}${path}`;
  });
}

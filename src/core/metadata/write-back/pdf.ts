// PDF write-back as an incremental update: a new Info dictionary, a new XMP metadata stream and a new catalog that
// points at it are appended after the original bytes with their own cross-reference section (whose /Prev leads to
// the old one). Not a byte of the original file changes; readers see the newest definitions.
import type { Stats } from 'node:fs';
import { constants } from 'node:fs';
import { copyFile, open } from 'node:fs/promises';
import { extractPdf } from '../../formats/pdf.ts';
import { addIsbn, clean, normalizeDate } from '../../formats/values.ts';
import { localName, parseXml, type XmlNode } from '../../formats/xml.ts';
import { emptyMetadata } from '../../formats/types.ts';
import { replaceFileAtomically } from './atomic-replace.ts';
import { decodeStream, PdfReader } from './pdf-document.ts';
import { dictGet, parseDict, parseInteger, parseReference, pdfTextString, serializeDict, type DictEntry } from './pdf-syntax.ts';
import { WriteBackError, type FileMetadata, type WriteBackHooks } from './types.ts';
import { assertReadsBack, reopened, type Expectation } from './verify.ts';
import { escapeAttr, escapeText, xmlSafe } from './xml-text.ts';

/** Info entries the catalog owns; every other entry (Producer, Creator, dates, custom keys) is carried over. */
const MANAGED_INFO_KEYS = new Set(['Title', 'Author', 'Subject', 'Keywords', 'EBX_PUBLISHER', 'Publisher', 'ISBN']);

/** Properties of the old XMP packet worth keeping in the new one: where the file came from, not what the book is. */
const CARRIED_XMP: [local: string, qualified: string][] = [
  ['CreateDate', 'xmp:CreateDate'],
  ['ModifyDate', 'xmp:ModifyDate'],
  ['CreatorTool', 'xmp:CreatorTool'],
  ['Producer', 'pdf:Producer'],
  ['DocumentID', 'xmpMM:DocumentID'],
  ['InstanceID', 'xmpMM:InstanceID'],
];

function carriedProperties(xmp: Buffer | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!xmp) return out;
  let root: XmlNode;
  try {
    root = parseXml(xmp.toString('utf8'), 'XMP metadata');
  } catch {
    return out;
  }
  const visit = (node: unknown, depth: number): void => {
    if (!node || typeof node !== 'object' || depth > 12) return;
    if (Array.isArray(node)) {
      for (const item of node) visit(item, depth + 1);
      return;
    }
    for (const [key, value] of Object.entries(node as XmlNode)) {
      const local = localName(key.replace(/^@_/, ''));
      const wanted = CARRIED_XMP.find(([name]) => name === local);
      if (wanted && !out.has(wanted[1])) {
        const first = Array.isArray(value) ? value[0] : value;
        const text = typeof first === 'object' && first !== null ? (first as XmlNode)['#text'] : first;
        const plain = clean(Array.isArray(text) ? text[0] : text);
        if (plain) out.set(wanted[1], plain);
      }
      if (typeof value === 'object') visit(value, depth + 1);
    }
  };
  visit(root, 0);
  return out;
}

function formatNumber(n: number): string {
  return Number.isInteger(n) ? String(n) : String(Number(n.toFixed(6)));
}

/** The XMP packet for the catalog's fields (Dublin Core plus Booklore's namespace, which Grimmory reads). */
export function buildXmp(meta: FileMetadata, carried: Map<string, string>): Buffer {
  const t = (s: string): string => escapeText(xmlSafe(s));
  const lines: string[] = [];
  const alt = (name: string, value: string | undefined): void => {
    if (value) lines.push(`      <${name}><rdf:Alt><rdf:li xml:lang="x-default">${t(value)}</rdf:li></rdf:Alt></${name}>`);
  };
  const list = (name: string, kind: 'Seq' | 'Bag', values: string[]): void => {
    if (values.length > 0) lines.push(`      <${name}><rdf:${kind}>${values.map((v) => `<rdf:li>${t(v)}</rdf:li>`).join('')}</rdf:${kind}></${name}>`);
  };
  const simple = (name: string, value: string | undefined): void => {
    if (value) lines.push(`      <${name}>${t(value)}</${name}>`);
  };
  alt('dc:title', meta.title);
  list('dc:creator', 'Seq', meta.authors);
  alt('dc:description', meta.description);
  list('dc:publisher', 'Bag', meta.publisher ? [meta.publisher] : []);
  list('dc:language', 'Bag', meta.language ? [meta.language] : []);
  list('dc:subject', 'Bag', meta.categories);
  list('dc:date', 'Seq', meta.publishedDate ? [meta.publishedDate] : []);
  for (const [, qualified] of CARRIED_XMP) simple(qualified, carried.get(qualified));
  simple('booklore:subtitle', meta.subtitle);
  simple('booklore:seriesName', meta.seriesName);
  simple('booklore:seriesNumber', meta.seriesName && meta.seriesNumber !== undefined ? formatNumber(meta.seriesNumber) : undefined);
  simple('booklore:seriesTotal', meta.seriesName && meta.seriesTotal !== undefined ? String(meta.seriesTotal) : undefined);
  list('booklore:tags', 'Bag', meta.tags);
  simple('booklore:isbn13', meta.isbn13);
  simple('booklore:isbn10', meta.isbn10);
  simple('booklore:asin', meta.asin);
  simple('booklore:goodreadsId', meta.goodreadsId);
  simple('booklore:googleId', meta.googleId);
  simple('booklore:hardcoverId', meta.hardcoverId);
  simple('booklore:hardcoverBookId', meta.hardcoverBookId);
  simple('booklore:comicvineId', meta.comicvineId);
  simple('booklore:lubimyczytacId', meta.lubimyczytacId);
  simple('booklore:ranobedbId', meta.ranobedbId);
  const ns = (prefix: string, uri: string): string => `\n        xmlns:${prefix}="${escapeAttr(uri)}"`;
  const packet =
    '<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?>\n' +
    '<x:xmpmeta xmlns:x="adobe:ns:meta/">\n' +
    '  <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\n' +
    '    <rdf:Description rdf:about=""' +
    ns('dc', 'http://purl.org/dc/elements/1.1/') +
    ns('xmp', 'http://ns.adobe.com/xap/1.0/') +
    ns('pdf', 'http://ns.adobe.com/pdf/1.3/') +
    ns('xmpMM', 'http://ns.adobe.com/xap/1.0/mm/') +
    ns('booklore', 'http://booklore.org/metadata/1.0/') +
    '>\n' +
    lines.map((l) => `${l}\n`).join('') +
    '    </rdf:Description>\n' +
    '  </rdf:RDF>\n' +
    '</x:xmpmeta>\n' +
    '<?xpacket end="w"?>';
  return Buffer.from(packet, 'utf8');
}

/** The Info dictionary: the old one's other entries in their order, then the catalog's. */
export function buildInfo(old: DictEntry[], meta: FileMetadata): DictEntry[] {
  const kept = old.filter((e) => !MANAGED_INFO_KEYS.has(e.key));
  const add = (key: string, value: string | undefined): void => {
    if (value) kept.push({ key, value: pdfTextString(xmlSafe(value)) });
  };
  add('Title', meta.title);
  add('Author', meta.authors.join('; '));
  add('Subject', meta.description);
  add('Keywords', expectedCategories(meta).join(', '));
  return kept;
}

/** The PDF reader drops subjects that are also tags (Booklore writes tags into dc:subject too). */
function expectedCategories(meta: FileMetadata): string[] {
  const tags = new Set(meta.tags.map((t) => t.toLowerCase()));
  return meta.categories.filter((c) => !tags.has(c.toLowerCase()));
}

export function pdfExpectation(meta: FileMetadata): Expectation {
  const isbns = emptyMetadata();
  for (const candidate of [meta.isbn13, meta.isbn10]) addIsbn(isbns, candidate);
  return {
    title: meta.title,
    subtitle: meta.subtitle,
    authors: meta.authors,
    description: meta.description,
    publisher: meta.publisher,
    language: meta.language,
    publishedDate: normalizeDate(meta.publishedDate),
    categories: expectedCategories(meta),
    tags: meta.tags,
    seriesName: meta.seriesName,
    seriesNumber: meta.seriesName ? meta.seriesNumber : undefined,
    seriesTotal: meta.seriesName ? meta.seriesTotal : undefined,
    isbn13: isbns.isbn13,
    isbn10: isbns.isbn10,
    asin: meta.asin,
    goodreadsId: meta.goodreadsId,
    googleId: meta.googleId,
    hardcoverId: meta.hardcoverId,
    comicvineId: meta.comicvineId,
  };
}

/** Read from parts of the file this update does not own: the catalog's /Lang, the creation date. */
const PDF_SOFT = new Set(['language', 'publishedDate', 'title']);

function xrefLine(offset: number, gen: number): string {
  return `${String(offset).padStart(10, '0')} ${String(gen).padStart(5, '0')} n\r\n`;
}

/** Consecutive object numbers grouped into subsections. */
function subsections(numbers: number[]): [number, number[]][] {
  const sorted = [...numbers].sort((a, b) => a - b);
  const out: [number, number[]][] = [];
  for (const n of sorted) {
    const last = out.at(-1);
    if (last && last[0] + last[1].length === n) last[1].push(n);
    else out.push([n, [n]]);
  }
  return out;
}

interface PlannedUpdate {
  bytes: Buffer;
}

interface NewObject {
  num: number;
  gen: number;
  body: Buffer;
}

/** Serializes the new objects, then a cross-reference section in the style of the file's newest one. */
function planUpdate(reader: PdfReader, objects: NewObject[], trailerExtras: DictEntry[], needsLeadingNewline: boolean): PlannedUpdate {
  const { structure } = reader;
  const base = structure.fileSize;
  const parts: Buffer[] = [];
  let length = 0;
  const push = (b: Buffer): void => {
    parts.push(b);
    length += b.length;
  };
  if (needsLeadingNewline) push(Buffer.from('\n', 'latin1'));
  const offsets = new Map<number, { offset: number; gen: number }>();
  for (const object of objects) {
    offsets.set(object.num, { offset: base + length, gen: object.gen });
    push(Buffer.from(`${object.num} ${object.gen} obj\n`, 'latin1'));
    push(object.body);
    push(Buffer.from('\nendobj\n', 'latin1'));
  }
  const oldSize = parseInteger(dictGet(structure.trailer, 'Size')) ?? 0;
  const highest = Math.max(oldSize - 1, ...objects.map((o) => o.num));
  const xrefOffset = base + length;
  if (structure.lastXrefIsStream) {
    const xrefNum = highest + 1;
    offsets.set(xrefNum, { offset: xrefOffset, gen: 0 });
    const sections = subsections([...offsets.keys()]);
    const rows: Buffer[] = [];
    for (const [, nums] of sections) {
      for (const n of nums) {
        const { offset, gen } = offsets.get(n) as { offset: number; gen: number };
        const row = Buffer.alloc(7);
        row.writeUInt8(1, 0);
        row.writeUInt32BE(offset, 1);
        row.writeUInt16BE(gen, 5);
        rows.push(row);
      }
    }
    const data = Buffer.concat(rows);
    const dict = serializeDict([
      { key: 'Type', value: '/XRef' },
      { key: 'Size', value: String(xrefNum + 1) },
      { key: 'Index', value: `[${sections.map(([first, nums]) => `${first} ${nums.length}`).join(' ')}]` },
      { key: 'W', value: '[1 4 2]' },
      ...trailerExtras,
      { key: 'Prev', value: String(structure.lastXrefOffset) },
      { key: 'Length', value: String(data.length) },
    ]);
    push(Buffer.from(`${xrefNum} 0 obj\n${dict}\nstream\n`, 'latin1'));
    push(data);
    push(Buffer.from('\nendstream\nendobj\n', 'latin1'));
  } else {
    let table = 'xref\n';
    for (const [first, nums] of subsections([...offsets.keys()])) {
      table += `${first} ${nums.length}\n`;
      for (const n of nums) {
        const { offset, gen } = offsets.get(n) as { offset: number; gen: number };
        table += xrefLine(offset, gen);
      }
    }
    const trailer = serializeDict([{ key: 'Size', value: String(highest + 1) }, ...trailerExtras, { key: 'Prev', value: String(structure.lastXrefOffset) }]);
    push(Buffer.from(`${table}trailer\n${trailer}\n`, 'latin1'));
  }
  push(Buffer.from(`startxref\n${xrefOffset}\n%%EOF\n`, 'latin1'));
  if (base + length > 0xffffffff) throw new WriteBackError('UNSUPPORTED', 'PDFs past 4 GiB are not updated');
  return { bytes: Buffer.concat(parts, length) };
}

async function lastByte(path: string, size: number): Promise<number | undefined> {
  if (size === 0) return undefined;
  const handle = await open(path, 'r');
  try {
    const b = Buffer.alloc(1);
    await handle.read(b, 0, 1, size - 1);
    return b[0];
  } finally {
    await handle.close();
  }
}

export async function writePdf(path: string, before: Stats, meta: FileMetadata, hooks?: WriteBackHooks): Promise<'written' | 'unchanged'> {
  const handle = await open(path, 'r');
  let update: PlannedUpdate;
  try {
    const reader = await PdfReader.open(handle, before.size);
    const trailer = reader.structure.trailer;
    if (dictGet(trailer, 'Encrypt') !== undefined) throw new WriteBackError('UNSUPPORTED', 'encrypted PDFs are not written to');
    const rootRef = parseReference(dictGet(trailer, 'Root'));
    if (!rootRef) throw new WriteBackError('CORRUPT', 'the PDF trailer names no document catalog');
    const catalogText = (await reader.object(rootRef.num)).text;
    if (!catalogText.startsWith('<<')) throw new WriteBackError('CORRUPT', 'the document catalog is not a dictionary');
    const catalog = parseDict(catalogText, 0).entries;

    const infoRef = parseReference(dictGet(trailer, 'Info'));
    let oldInfo: DictEntry[] = [];
    if (infoRef) {
      const text = (await reader.object(infoRef.num).catch(() => undefined))?.text;
      if (text?.startsWith('<<')) oldInfo = parseDict(text, 0).entries;
    }
    let oldXmp: Buffer | undefined;
    const metadataRef = parseReference(dictGet(catalog, 'Metadata'));
    if (metadataRef) {
      const stream = (await reader.object(metadataRef.num).catch(() => undefined))?.stream;
      if (stream) oldXmp = (() => {
        try {
          return decodeStream(stream.dict, stream.data, 16 * 1024 * 1024);
        } catch {
          return undefined;
        }
      })();
    }

    const xmp = buildXmp(meta, carriedProperties(oldXmp));
    const info = buildInfo(oldInfo, meta);
    if (oldXmp?.equals(xmp) && serializeDict(oldInfo) === serializeDict(info)) return 'unchanged';

    const oldSize = parseInteger(dictGet(trailer, 'Size'));
    if (oldSize === undefined || oldSize <= 0) throw new WriteBackError('CORRUPT', 'the PDF trailer has no /Size');
    const xmpNum = oldSize;
    const infoNum = oldSize + 1;
    const newCatalog = [...catalog.filter((e) => e.key !== 'Metadata'), { key: 'Metadata', value: `${xmpNum} 0 R` }];
    const objects: NewObject[] = [
      { num: rootRef.num, gen: await reader.generationOf(rootRef.num), body: Buffer.from(serializeDict(newCatalog), 'latin1') },
      { num: xmpNum, gen: 0, body: Buffer.concat([Buffer.from(`${serializeDict([{ key: 'Type', value: '/Metadata' }, { key: 'Subtype', value: '/XML' }, { key: 'Length', value: String(xmp.length) }])}\nstream\n`, 'latin1'), xmp, Buffer.from('\nendstream', 'latin1')]) },
    ];
    const extras: DictEntry[] = [{ key: 'Root', value: `${rootRef.num} ${rootRef.gen} R` }];
    if (info.length > 0) {
      objects.push({ num: infoNum, gen: 0, body: Buffer.from(serializeDict(info), 'latin1') });
      extras.push({ key: 'Info', value: `${infoNum} 0 R` });
    }
    const id = dictGet(trailer, 'ID');
    if (id) extras.push({ key: 'ID', value: id });
    const last = await lastByte(path, before.size);
    update = planUpdate(reader, objects, extras, last !== 0x0a && last !== 0x0d);
  } finally {
    await handle.close();
  }

  await replaceFileAtomically(path, before, {
    produce: async (tempPath) => {
      await copyFile(path, tempPath, constants.COPYFILE_EXCL);
      const out = await open(tempPath, 'r+');
      try {
        await out.write(update.bytes, 0, update.bytes.length, before.size);
        await out.sync();
      } finally {
        await out.close();
      }
    },
    verify: async (tempPath) => {
      const extraction = await reopened(extractPdf, tempPath, 'the updated PDF');
      assertReadsBack(pdfExpectation(meta), extraction, PDF_SOFT);
    },
    ...(hooks ? { hooks } : {}),
  });
  return 'written';
}

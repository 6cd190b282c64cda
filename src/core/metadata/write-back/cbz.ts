// CBZ write-back: ComicInfo.xml is replaced (or added at the end); every page and other entry is copied as stored.
import type { Stats } from 'node:fs';
import { extractComic } from '../../formats/comic.ts';
import { decodeXml } from '../../formats/comic-info.ts';
import { findComicInfo } from '../../formats/comic-pages.ts';
import { FormatError } from '../../formats/errors.ts';
import { LIMITS } from '../../formats/limits.ts';
import { parseIsbn, parseNumber, splitCommaList } from '../../formats/values.ts';
import { withZip } from '../../formats/zip.ts';
import { replaceFileAtomically } from './atomic-replace.ts';
import { WriteBackError, type FileMetadata, type WriteBackHooks } from './types.ts';
import { assertReadsBack, reopened, type Expectation } from './verify.ts';
import { childrenOf, escapeText, findElement, layOut, localNameOf, xmlSafe } from './xml-text.ts';
import { readZipLayoutOf, rewriteZipEntry } from './zip-rewrite.ts';

/** The ComicInfo v2 schema's element order (a sequence); elements it does not know go last. */
const SCHEMA_ORDER = [
  'Title', 'Series', 'Number', 'Count', 'Volume', 'AlternateSeries', 'AlternateNumber', 'AlternateCount', 'StoryArc', 'StoryArcNumber', 'SeriesGroup',
  'Summary', 'Notes', 'Year', 'Month', 'Day', 'Writer', 'Penciller', 'Inker', 'Colorist', 'Letterer', 'CoverArtist', 'Editor', 'Translator',
  'Publisher', 'Imprint', 'Genre', 'Tags', 'Web', 'PageCount', 'LanguageISO', 'Format', 'BlackAndWhite', 'Manga', 'Characters', 'Teams',
  'Locations', 'ScanInformation', 'MainCharacterOrTeam', 'Review', 'AgeRating', 'Pages', 'CommunityRating', 'GTIN',
];
const RANK = new Map(SCHEMA_ORDER.map((name, i) => [name.toLowerCase(), i]));

/** Elements the catalog owns; the rest (Pages, PageCount, ScanInformation, ratings) is kept as written. */
const MANAGED = new Set([
  'title', 'series', 'number', 'count', 'volume', 'alternateseries', 'alternatenumber', 'storyarc', 'storyarcnumber', 'summary', 'notes',
  'year', 'month', 'day', 'writer', 'penciller', 'inker', 'colorist', 'letterer', 'coverartist', 'editor', 'publisher', 'imprint', 'genre',
  'tags', 'web', 'languageiso', 'format', 'blackandwhite', 'manga', 'characters', 'teams', 'locations', 'agerating', 'gtin',
]);

/** Minimum reader age → the AgeRating label ComicInfo has for it. */
const AGE_LABELS: Record<number, string> = { 18: 'Adults Only 18+', 17: 'Mature 17+', 15: 'MA15+', 13: 'Teen', 10: 'Everyone 10+', 6: 'Kids to Adults', 3: 'Early Childhood', 0: 'Everyone' };

function formatNumber(n: number): string {
  return Number.isInteger(n) ? String(n) : String(Number(n.toFixed(6)));
}

function issueNumber(meta: FileMetadata): string | undefined {
  return meta.comic?.issueNumber ?? (meta.seriesNumber !== undefined ? formatNumber(meta.seriesNumber) : undefined);
}

function mangaValue(meta: FileMetadata): string | undefined {
  const manga = meta.comic?.manga;
  if (manga === undefined) return undefined;
  if (!manga) return 'No';
  return meta.comic?.readingDirection?.toLowerCase() === 'rtl' ? 'YesAndRightToLeft' : 'Yes';
}

/** The catalog's fields as ComicInfo elements (name, text). */
function fields(meta: FileMetadata): [string, string][] {
  const c = meta.comic;
  const [year, month, day] = (meta.publishedDate ?? '').split('-');
  const joined = (list: string[] | undefined): string | undefined => (list && list.length > 0 ? list.join(', ') : undefined);
  const yesNo = (b: boolean | undefined): string | undefined => (b === undefined ? undefined : b ? 'Yes' : 'No');
  const candidates: [string, string | number | undefined][] = [
    ['Title', meta.title],
    ['Series', meta.seriesName],
    ['Number', issueNumber(meta)],
    ['Count', meta.seriesTotal !== undefined && meta.seriesTotal > 0 ? meta.seriesTotal : undefined],
    ['Volume', c?.volumeNumber !== undefined && c.volumeNumber > 0 ? c.volumeNumber : undefined],
    ['AlternateSeries', c?.alternateSeries],
    ['AlternateNumber', c?.alternateIssue],
    ['StoryArc', c?.storyArc],
    ['StoryArcNumber', c?.storyArcNumber !== undefined ? formatNumber(c.storyArcNumber) : undefined],
    ['Summary', meta.description],
    ['Notes', c?.notes],
    ['Year', year ? Number(year) : undefined],
    ['Month', month ? Number(month) : undefined],
    ['Day', day ? Number(day) : undefined],
    ['Writer', joined(meta.authors)],
    ['Penciller', joined(c?.pencillers)],
    ['Inker', joined(c?.inkers)],
    ['Colorist', joined(c?.colorists)],
    ['Letterer', joined(c?.letterers)],
    ['CoverArtist', joined(c?.coverArtists)],
    ['Editor', joined(c?.editors)],
    ['Publisher', meta.publisher],
    ['Imprint', c?.imprint],
    ['Genre', joined(meta.categories)],
    ['Tags', joined(meta.tags)],
    ['Web', c?.webLink],
    ['LanguageISO', meta.language],
    ['Format', c?.format],
    ['BlackAndWhite', yesNo(c?.blackAndWhite)],
    ['Manga', mangaValue(meta)],
    ['Characters', joined(c?.characters)],
    ['Teams', joined(c?.teams)],
    ['Locations', joined(c?.locations)],
    ['AgeRating', meta.ageRating !== undefined ? AGE_LABELS[meta.ageRating] : undefined],
    ['GTIN', meta.isbn13 ?? meta.isbn10],
  ];
  return candidates.filter((f): f is [string, string | number] => f[1] !== undefined && f[1] !== '').map(([name, value]) => [name, String(value)]);
}

const NEW_DOCUMENT = '<?xml version="1.0" encoding="utf-8"?>\n<ComicInfo xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n</ComicInfo>\n';

/**
 * ComicInfo.xml saying what the catalog says: the catalog's elements are written fresh, the others keep their
 * bytes, and all are laid out one per line in the schema's order. Applying it to its own output changes nothing.
 */
export function rewriteComicInfo(existing: string | undefined, meta: FileMetadata): string {
  const xml = existing ?? NEW_DOCUMENT;
  const root = findElement(xml, 'ComicInfo');
  if (!root) throw new WriteBackError('CORRUPT', 'ComicInfo.xml has no <ComicInfo> element');
  const kids = root.selfClosing ? [] : childrenOf(xml, root);
  const { items, tail } = layOut(xml, kids);
  const firstLead = items[0]?.lead ?? '';
  const indent = firstLead.includes('\n') ? firstLead : '\n  ';
  type Placed = { rank: number; order: number; text: string };
  const placed: Placed[] = [];
  let order = 0;
  for (const item of items) {
    const child = item.child;
    if (child.kind === 'element' && MANAGED.has(localNameOf(child.element.name).toLowerCase())) continue;
    const rank = child.kind === 'element' ? (RANK.get(localNameOf(child.element.name).toLowerCase()) ?? SCHEMA_ORDER.length) : SCHEMA_ORDER.length;
    placed.push({ rank, order: order++, text: xml.slice(child.start, child.end) });
  }
  for (const [name, value] of fields(meta)) placed.push({ rank: RANK.get(name.toLowerCase()) ?? SCHEMA_ORDER.length, order: -1, text: `<${name}>${escapeText(xmlSafe(value))}</${name}>` });
  placed.sort((a, b) => a.rank - b.rank || a.order - b.order);
  let startTag = xml.slice(root.start, root.openEnd);
  if (root.selfClosing) startTag = startTag.replace(/\s*\/>$/, '>');
  const content = placed.map((p) => indent + p.text).join('') + (tail.includes('\n') ? tail : '\n');
  return `${xml.slice(0, root.start)}${startTag}${content}</${root.name}>${xml.slice(root.end)}`;
}

export function cbzExpectation(meta: FileMetadata): Expectation {
  const c = meta.comic;
  const number = issueNumber(meta);
  const gtin = meta.isbn13 ?? meta.isbn10;
  const isbn = parseIsbn(gtin);
  const age = meta.ageRating !== undefined && AGE_LABELS[meta.ageRating] !== undefined ? meta.ageRating : undefined;
  const list = (values: string[] | undefined): string[] => splitCommaList(values?.join(', '));
  return {
    title: meta.title,
    seriesName: meta.seriesName,
    seriesNumber: parseNumber(number),
    seriesTotal: meta.seriesTotal !== undefined && meta.seriesTotal > 0 ? meta.seriesTotal : undefined,
    description: meta.description,
    publishedDate: meta.publishedDate,
    publisher: meta.publisher,
    language: meta.language,
    authors: list(meta.authors),
    categories: list(meta.categories),
    tags: list(meta.tags),
    isbn13: isbn.isbn13,
    isbn10: isbn.isbn10,
    ageRating: age,
    'comic.issueNumber': number,
    'comic.volumeNumber': c?.volumeNumber !== undefined && c.volumeNumber > 0 ? c.volumeNumber : undefined,
    'comic.storyArc': c?.storyArc,
    'comic.storyArcNumber': c?.storyArcNumber,
    'comic.alternateSeries': c?.alternateSeries,
    'comic.alternateIssue': c?.alternateIssue,
    'comic.imprint': c?.imprint,
    'comic.format': c?.format,
    'comic.blackAndWhite': c?.blackAndWhite,
    'comic.manga': c?.manga,
    'comic.webLink': c?.webLink?.split(' ')[0],
    'comic.notes': c?.notes,
    'comic.pencillers': list(c?.pencillers),
    'comic.inkers': list(c?.inkers),
    'comic.colorists': list(c?.colorists),
    'comic.letterers': list(c?.letterers),
    'comic.coverArtists': list(c?.coverArtists),
    'comic.editors': list(c?.editors),
    'comic.characters': list(c?.characters),
    'comic.teams': list(c?.teams),
    'comic.locations': list(c?.locations),
  };
}

/** Without a title the comic reader names the book after its file. */
const CBZ_SOFT = new Set(['title']);

export async function writeCbz(path: string, before: Stats, meta: FileMetadata, hooks?: WriteBackHooks): Promise<'written' | 'unchanged'> {
  let current: { name: string; text: string } | undefined;
  try {
    current = await withZip(path, async (zip) => {
      const name = findComicInfo(zip.entries.filter((e) => !e.isDirectory).map((e) => e.name));
      return name ? { name, text: decodeXml(await zip.read(name, LIMITS.maxXmlBytes)) } : undefined;
    });
  } catch (error) {
    if (error instanceof FormatError) throw new WriteBackError(error.code === 'UNSAFE' || error.code === 'TOO_LARGE' ? 'UNSUPPORTED' : 'CORRUPT', error.message);
    throw error;
  }
  if (current && /<!ENTITY/i.test(current.text)) throw new WriteBackError('UNSUPPORTED', 'ComicInfo.xml declares XML entities; it is not rewritten');
  let rewritten: string;
  try {
    rewritten = rewriteComicInfo(current?.text, meta);
  } catch (error) {
    if (error instanceof FormatError) throw new WriteBackError('CORRUPT', `ComicInfo.xml cannot be rewritten: ${error.message}`);
    throw error;
  }
  if (current && rewritten === current.text) return 'unchanged';
  const layout = await readZipLayoutOf(path, before.size);
  const name = current?.name ?? 'ComicInfo.xml';
  if (current && !layout.entries.some((e) => e.name === name)) throw new WriteBackError('UNSUPPORTED', `the entry name ${name} cannot be matched in the central directory`);
  // A UTF-16 ComicInfo.xml is written back as UTF-8 (its declaration, if any, is left to readers that sniff the BOM).
  const content = Buffer.from(rewritten.replace(/^(<\?xml[^>]*encoding\s*=\s*["'])utf-16(["'])/i, '$1utf-8$2'), 'utf8');
  await replaceFileAtomically(path, before, {
    produce: (tempPath) => rewriteZipEntry(path, tempPath, layout, { name, content }),
    verify: async (tempPath) => {
      const extraction = await reopened(extractComic, tempPath, 'the rewritten CBZ');
      if (extraction.warnings?.length) throw new WriteBackError('VERIFY_FAILED', `the rewritten ComicInfo.xml does not parse: ${extraction.warnings.join('; ')}`);
      assertReadsBack(cbzExpectation(meta), extraction, CBZ_SOFT);
    },
    ...(hooks ? { hooks } : {}),
  });
  return 'written';
}

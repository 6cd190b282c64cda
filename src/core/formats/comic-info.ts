// ComicInfo.xml (the ComicRack schema, v1 to v2.1) → shared metadata plus the comic-specific fields.
import { FormatError } from './errors.ts';
import { LIMITS } from './limits.ts';
import { emptyComic, emptyMetadata } from './types.ts';
import type { ExtractedComic, ExtractedMetadata } from './types.ts';
import { addIsbn, clean, normalizeDate, parseIsbn, parseNumber, splitCommaList } from './values.ts';
import { attr, children, find, localName, parseXml, text } from './xml.ts';
import type { XmlNode } from './xml.ts';

export interface ComicInfo {
  metadata: ExtractedMetadata;
  comic: ExtractedComic;
  /** Zero-based page index the file marks as the front cover (`<Page Image="n" Type="FrontCover"/>`). */
  frontCoverIndex?: number;
}

/**
 * ComicInfo AgeRating values → minimum reader age. ESRB-style labels map to their stated ages; the Australian
 * labels M and MA15+ to 15; G and Everyone to 0; PG to 10 (parental guidance, like Everyone 10+); Kids to Adults
 * to 6. "Unknown", "Rating Pending" and anything unrecognised leave the age absent.
 */
const AGE_RATINGS: Record<string, number> = {
  'adults only 18+': 18,
  'x18+': 18,
  'r18+': 18,
  'mature 17+': 17,
  'ma15+': 15,
  m: 15,
  teen: 13,
  'everyone 10+': 10,
  pg: 10,
  'kids to adults': 6,
  'early childhood': 3,
  everyone: 0,
  g: 0,
};

export function parseAgeRating(value: string | undefined): number | undefined {
  const v = clean(value)?.toLowerCase();
  if (!v) return undefined;
  if (v in AGE_RATINGS) return AGE_RATINGS[v];
  const bare = v.match(/^(\d{1,2})\s*\+?$/);
  return bare ? Number(bare[1]) : undefined;
}

/** `Yes` / `No` / `Unknown` (any case); only the first two mean something. */
function yesNo(value: string | undefined): boolean | undefined {
  const v = clean(value)?.toLowerCase();
  if (v === 'yes' || v === 'true') return true;
  if (v === 'no' || v === 'false') return false;
  return undefined;
}

/** ComicRack writes -1 (or 0) for "not set" in numeric fields. */
function positive(value: number | undefined): number | undefined {
  return value !== undefined && value > 0 ? value : undefined;
}

function publishedDate(year: string | undefined, month: string | undefined, day: string | undefined): string | undefined {
  const y = positive(parseNumber(year));
  if (!y || !Number.isInteger(y)) return undefined;
  const m = positive(parseNumber(month)) ?? 1;
  const d = positive(parseNumber(day)) ?? 1;
  return normalizeDate(`${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`);
}

/** Text decoding that honours a UTF-16 byte order mark (some taggers write UTF-16). */
export function decodeXml(bytes: Buffer): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  return new TextDecoder('utf-8').decode(bytes);
}

/** Looks fields up by name ignoring case: taggers disagree on `LanguageISO` vs `LanguageIso`, `Web` vs `web`. */
function fieldReader(root: XmlNode): (name: string) => string | undefined {
  const byName = new Map<string, unknown>();
  for (const [key, value] of Object.entries(root)) {
    if (key.startsWith('@_') || key === '#text') continue;
    const lower = localName(key).toLowerCase();
    if (!byName.has(lower)) byName.set(lower, Array.isArray(value) ? value[0] : value);
  }
  return (name) => text(byName.get(name.toLowerCase()));
}

function frontCover(root: XmlNode): number | undefined {
  const pagesNode = children(root, 'Pages')[0];
  for (const page of children(pagesNode, 'Page')) {
    if (attr(page, 'Type')?.toLowerCase() !== 'frontcover') continue;
    const index = Number(attr(page, 'Image'));
    if (Number.isInteger(index) && index >= 0) return index;
  }
  return undefined;
}

/**
 * Parses ComicInfo.xml text. Entity declarations are refused (UNSAFE), malformed XML is CORRUPT, and a document
 * without a ComicInfo root is CORRUPT too: the caller decides what a bad sidecar costs.
 */
export function parseComicInfo(xml: string): ComicInfo {
  if (xml.length > LIMITS.maxXmlBytes) throw new FormatError('TOO_LARGE', `ComicInfo.xml is larger than ${LIMITS.maxXmlBytes} bytes`);
  const doc = parseXml(xml, 'ComicInfo.xml');
  const root = find(doc, 'ComicInfo');
  if (!root) throw new FormatError('CORRUPT', 'ComicInfo.xml has no <ComicInfo> element');
  const field = fieldReader(root);

  const metadata = emptyMetadata();
  const comic = emptyComic();

  metadata.title = clean(field('Title'));
  metadata.seriesName = clean(field('Series'));
  const issue = clean(field('Number'));
  metadata.seriesNumber = parseNumber(issue);
  comic.issueNumber = issue;
  metadata.seriesTotal = positive(parseNumber(field('Count')));
  comic.volumeNumber = positive(parseNumber(field('Volume')));
  metadata.description = clean(field('Summary'));
  metadata.publishedDate = publishedDate(field('Year'), field('Month'), field('Day'));
  metadata.publisher = clean(field('Publisher'));
  comic.imprint = clean(field('Imprint'));
  metadata.language = clean(field('LanguageISO'));
  metadata.pageCount = positive(parseNumber(field('PageCount')));

  comic.writers = splitCommaList(field('Writer'));
  metadata.authors = [...comic.writers];
  comic.pencillers = splitCommaList(field('Penciller'));
  comic.inkers = splitCommaList(field('Inker'));
  comic.colorists = splitCommaList(field('Colorist'));
  comic.letterers = splitCommaList(field('Letterer'));
  comic.coverArtists = splitCommaList(field('CoverArtist'));
  comic.editors = splitCommaList(field('Editor'));
  comic.characters = splitCommaList(field('Characters'));
  comic.teams = splitCommaList(field('Teams'));
  comic.locations = splitCommaList(field('Locations'));
  metadata.categories = splitCommaList(field('Genre'));
  metadata.tags = splitCommaList(field('Tags'));

  // v2.1 allows several space-separated links; the first is the canonical one.
  comic.webLink = clean(field('Web'))?.split(' ')[0];
  comic.format = clean(field('Format'));
  comic.blackAndWhite = yesNo(field('BlackAndWhite'));
  const manga = clean(field('Manga'))?.toLowerCase();
  if (manga === 'yesandrighttoleft') {
    comic.manga = true;
    comic.readingDirection = 'rtl';
  } else {
    comic.manga = yesNo(manga);
  }
  comic.storyArc = clean(field('StoryArc'));
  comic.storyArcNumber = parseNumber(field('StoryArcNumber'));
  comic.alternateSeries = clean(field('AlternateSeries'));
  comic.alternateIssue = clean(field('AlternateNumber'));
  comic.notes = clean(field('Notes'));

  const gtin = clean(field('GTIN'));
  if (gtin) {
    metadata.identifiers.gtin = gtin;
    addIsbn(metadata, gtin);
    const { isbn13, isbn10 } = parseIsbn(gtin);
    if (isbn13 ?? isbn10) metadata.identifiers.isbn = (isbn13 ?? isbn10) as string;
  }
  metadata.ageRating = parseAgeRating(field('AgeRating'));
  const rating = parseNumber(field('CommunityRating'));
  if (rating !== undefined && rating >= 0 && rating <= 5) metadata.rating = rating;

  const frontCoverIndex = frontCover(root);
  return { metadata: withoutUndefined(metadata), comic: withoutUndefined(comic), ...(frontCoverIndex !== undefined ? { frontCoverIndex } : {}) };
}

/** Drops keys whose value is undefined, so "the file does not say" is an absent key, not a present undefined. */
function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

// Between the catalog and a sidecar: a book's metadata as sidecar content, and sidecar content as a metadata patch.
import type { CreatorRole, MetadataPatch, PatchColumn } from '../books/metadata-writer.ts';
import type { SidecarBookMetadata, SidecarComic, SidecarIdentifiers, SidecarRating, SidecarRatings } from './format.ts';

type Json = Record<string, unknown>;

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const bool = (v: unknown): boolean | undefined => (typeof v === 'boolean' ? v : undefined);
const names = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** Drops the keys whose value is undefined, so the object serializes as Grimmory's NON_NULL objects do. */
function defined<T extends object>(o: T): T {
  for (const key of Object.keys(o) as (keyof T)[]) if (o[key] === undefined) delete o[key];
  return o;
}

function rating(average: unknown, count: unknown): SidecarRating | undefined {
  const r = defined({ average: num(average), count: num(count) });
  return Object.keys(r).length > 0 ? r : undefined;
}

const IDENTIFIER_KEYS = ['asin', 'goodreadsId', 'googleId', 'hardcoverId', 'hardcoverBookId', 'comicvineId', 'lubimyczytacId', 'ranobedbId', 'audibleId'] as const;

/** Sidecar list name → comic creator role. */
const CREATOR_LISTS: [keyof SidecarComic, CreatorRole][] = [
  ['pencillers', 'PENCILLER'], ['inkers', 'INKER'], ['colorists', 'COLORIST'], ['letterers', 'LETTERER'], ['coverArtists', 'COVER_ARTIST'], ['editors', 'EDITOR'],
];
const COMIC_TEXT = ['issueNumber', 'volumeName', 'storyArc', 'alternateSeries', 'alternateIssue', 'imprint', 'format', 'readingDirection', 'webLink', 'notes'] as const;
const COMIC_NUMBERS = ['volumeNumber', 'storyArcNumber'] as const;
const COMIC_FLAGS = ['blackAndWhite', 'manga'] as const;
const COMIC_NAME_LISTS = ['characters', 'teams', 'locations'] as const;

function comicFromJson(c: Json): SidecarComic {
  const out: SidecarComic = {
    issueNumber: str(c.issueNumber), volumeName: str(c.volumeName), volumeNumber: num(c.volumeNumber), storyArc: str(c.storyArc),
    storyArcNumber: num(c.storyArcNumber), alternateSeries: str(c.alternateSeries), alternateIssue: str(c.alternateIssue),
  };
  for (const [list] of CREATOR_LISTS) if (Array.isArray(c[list])) (out as Json)[list] = names(c[list]);
  Object.assign(out, {
    imprint: str(c.imprint), format: str(c.format), blackAndWhite: bool(c.blackAndWhite), manga: bool(c.manga), readingDirection: str(c.readingDirection),
    characters: Array.isArray(c.characters) ? names(c.characters) : undefined, teams: Array.isArray(c.teams) ? names(c.teams) : undefined,
    locations: Array.isArray(c.locations) ? names(c.locations) : undefined, webLink: str(c.webLink), notes: str(c.notes),
  });
  return defined(out);
}

/**
 * A book's metadata (Grimmory's BookMetadata JSON, as the Book JSON carries it) as sidecar content, field for field
 * what Grimmory's own export writes, plus the comic creators.
 */
export function sidecarFromBookMetadata(m: Json): SidecarBookMetadata {
  const published = str(m.publishedDate);
  const seriesName = str(m.seriesName);
  const seriesNumber = num(m.seriesNumber);
  const seriesTotal = num(m.seriesTotal);
  const identifiers: SidecarIdentifiers = defined(Object.fromEntries(IDENTIFIER_KEYS.map((k) => [k, str(m[k])])));
  const ratings: SidecarRatings = defined({
    amazon: rating(m.amazonRating, m.amazonReviewCount),
    goodreads: rating(m.goodreadsRating, m.goodreadsReviewCount),
    hardcover: rating(m.hardcoverRating, m.hardcoverReviewCount),
    lubimyczytac: rating(m.lubimyczytacRating, undefined),
    ranobedb: rating(m.ranobedbRating, undefined),
    audible: rating(m.audibleRating, m.audibleReviewCount),
  });
  const comicFields = m.comicMetadata && typeof m.comicMetadata === 'object' ? comicFromJson(m.comicMetadata as Json) : undefined;
  const comic = comicFields && Object.keys(comicFields).length > 0 ? comicFields : undefined;
  return defined({
    title: str(m.title),
    subtitle: str(m.subtitle),
    authors: names(m.authors),
    publisher: str(m.publisher),
    // Only a plain date goes out: it is all Grimmory's LocalDate field reads.
    publishedDate: published && /^\d{4}-\d{2}-\d{2}/.test(published) ? published.slice(0, 10) : undefined,
    description: str(m.description),
    isbn10: str(m.isbn10),
    isbn13: str(m.isbn13),
    language: str(m.language),
    pageCount: num(m.pageCount),
    categories: names(m.categories),
    moods: names(m.moods),
    tags: names(m.tags),
    series: seriesName !== undefined || seriesNumber !== undefined || seriesTotal !== undefined ? defined({ name: seriesName, number: seriesNumber, total: seriesTotal }) : undefined,
    identifiers,
    ratings,
    ageRating: num(m.ageRating),
    contentRating: str(m.contentRating),
    narrator: str(m.narrator),
    abridged: bool(m.abridged),
    comicMetadata: comic,
  });
}

/** Grimmory imports a value only when it is there: not null, not blank text, not an empty list. */
const given = (v: string | undefined): string | undefined => (v !== undefined && v.trim() !== '' ? v : undefined);
const givenList = (v: string[] | undefined): string[] | undefined => (v !== undefined && v.length > 0 ? v : undefined);
const flag = (v: boolean | undefined): number | undefined => (v === undefined ? undefined : v ? 1 : 0);

function comicPatch(c: SidecarComic): MetadataPatch['comic'] {
  const fields: Record<string, string | number | undefined> = {};
  const column = (key: string): string => key.replace(/[A-Z]/g, (ch) => `_${ch.toLowerCase()}`);
  for (const key of COMIC_TEXT) fields[column(key)] = given(c[key]);
  for (const key of COMIC_NUMBERS) fields[column(key)] = c[key];
  for (const key of COMIC_FLAGS) fields[column(key)] = flag(c[key]);
  const creators: Partial<Record<CreatorRole, string[]>> = {};
  for (const [list, role] of CREATOR_LISTS) {
    const value = givenList(c[list] as string[] | undefined);
    if (value) creators[role] = value;
  }
  const patch: NonNullable<MetadataPatch['comic']> = { fields, creators };
  for (const key of COMIC_NAME_LISTS) {
    const value = givenList(c[key]);
    if (value) patch[key] = value;
  }
  return patch;
}

/** What importing the sidecar writes: every field it gives (Grimmory's REPLACE_WHEN_PROVIDED), nothing it leaves out. */
export function patchFromSidecar(m: SidecarBookMetadata): MetadataPatch {
  const ids = m.identifiers ?? {};
  const r = m.ratings ?? {};
  const fields: Partial<Record<PatchColumn, string | number | undefined>> = {
    title: given(m.title),
    subtitle: given(m.subtitle),
    publisher: given(m.publisher),
    published_date: m.publishedDate,
    description: given(m.description),
    isbn_10: given(m.isbn10),
    isbn_13: given(m.isbn13),
    language: given(m.language),
    page_count: m.pageCount,
    series_name: given(m.series?.name),
    series_number: m.series?.number,
    series_total: m.series?.total,
    asin: given(ids.asin),
    goodreads_id: given(ids.goodreadsId),
    google_id: given(ids.googleId),
    hardcover_id: given(ids.hardcoverId),
    hardcover_book_id: given(ids.hardcoverBookId),
    comicvine_id: given(ids.comicvineId),
    lubimyczytac_id: given(ids.lubimyczytacId),
    ranobedb_id: given(ids.ranobedbId),
    audible_id: given(ids.audibleId),
    amazon_rating: r.amazon?.average,
    amazon_review_count: r.amazon?.count,
    goodreads_rating: r.goodreads?.average,
    goodreads_review_count: r.goodreads?.count,
    hardcover_rating: r.hardcover?.average,
    hardcover_review_count: r.hardcover?.count,
    lubimyczytac_rating: r.lubimyczytac?.average,
    ranobedb_rating: r.ranobedb?.average,
    audible_rating: r.audible?.average,
    audible_review_count: r.audible?.count,
    age_rating: m.ageRating,
    content_rating: given(m.contentRating),
    narrator: given(m.narrator),
    abridged: flag(m.abridged),
  };
  const patch: MetadataPatch = { fields: defined(fields) as MetadataPatch['fields'] };
  for (const key of ['authors', 'categories', 'moods', 'tags'] as const) {
    const value = givenList(m[key]);
    if (value) patch[key] = value;
  }
  if (m.comicMetadata) patch.comic = comicPatch(m.comicMetadata);
  return patch;
}

const SET_LISTS = new Set(['categories', 'moods', 'tags', 'characters', 'teams', 'locations', 'pencillers', 'inkers', 'colorists', 'letterers', 'coverArtists', 'editors']);

/** A comparable form: no absent, blank or empty values, set-like lists sorted, keys sorted. */
function canonical(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) {
    const list = value.filter((v): v is string => typeof v === 'string' && v.trim() !== '');
    if (list.length === 0) return undefined;
    return SET_LISTS.has(key) ? [...new Set(list)].sort() : list;
  }
  if (value && typeof value === 'object') {
    const out: Json = {};
    for (const k of Object.keys(value).sort()) {
      const v = canonical((value as Json)[k], k);
      if (v !== undefined) out[k] = v;
    }
    return Object.keys(out).length > 0 ? out : undefined;
  }
  if (typeof value === 'string') return value.trim() === '' ? undefined : value;
  return value ?? undefined;
}

/** Whether two sidecar metadata objects say the same thing. */
export function sameSidecarMetadata(a: SidecarBookMetadata | undefined, b: SidecarBookMetadata | undefined): boolean {
  return JSON.stringify(canonical(a ?? {}) ?? {}) === JSON.stringify(canonical(b ?? {}) ?? {});
}

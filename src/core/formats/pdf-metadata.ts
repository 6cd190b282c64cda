// Merges a PDF's Info dictionary and its XMP packet into book metadata; XMP wins wherever it says something.
import { emptyMetadata } from './types.ts';
import type { ExtractedMetadata } from './types.ts';
import type { XmpFields } from './pdf-xmp.ts';
import { addIsbn, clean, normalizeDate, splitPeople, uniqueList } from './values.ts';

/** The Info dictionary as pdf.js reports it: standard keys as strings, everything else under `Custom`. */
export interface PdfInfo {
  Title?: unknown;
  Author?: unknown;
  Subject?: unknown;
  Keywords?: unknown;
  CreationDate?: unknown;
  /** The catalog's /Lang, which pdf.js reports alongside the Info entries. */
  Language?: unknown;
  Custom?: Map<string, unknown> | Record<string, unknown>;
}

const SCHEME_FIELDS = {
  asin: 'asin',
  google: 'googleId',
  goodreads: 'goodreadsId',
  hardcover: 'hardcoverId',
  comicvine: 'comicvineId',
} as const;

export function buildPdfMetadata(info: PdfInfo, xmp: XmpFields | undefined, pageCount: number): ExtractedMetadata {
  const meta = emptyMetadata();
  const custom = (key: string): string | undefined => {
    const entries = info.Custom instanceof Map ? info.Custom : new Map(Object.entries(info.Custom ?? {}));
    for (const [k, v] of entries) if (k.toLowerCase() === key.toLowerCase()) return clean(isPdfName(v) ? v.name : v);
    return undefined;
  };
  const infoText = (value: unknown): string | undefined => (typeof value === 'string' ? clean(value) : undefined);

  meta.title = clean(xmp?.title) ?? infoText(info.Title);
  meta.subtitle = clean(xmp?.subtitle);
  meta.authors = xmp?.authors.length ? xmp.authors : splitPeople(infoText(info.Author));
  meta.description = clean(xmp?.description) ?? infoText(info.Subject);
  meta.publisher = clean(xmp?.publisher) ?? custom('EBX_PUBLISHER') ?? custom('Publisher');
  meta.language = clean(xmp?.language) ?? custom('Language') ?? infoText(info.Language);
  meta.publishedDate = xmp?.publishedDate ?? normalizeDate(infoText(info.CreationDate));
  meta.categories = xmp?.subjects.length ? xmp.subjects : splitKeywords(clean(xmp?.keywords) ?? infoText(info.Keywords));
  meta.tags = xmp?.tags ?? [];
  meta.pageCount = pageCount;

  if (xmp) {
    meta.seriesName = clean(xmp.seriesName);
    meta.seriesNumber = xmp.seriesNumber;
    meta.seriesTotal = xmp.seriesTotal;
    meta.rating = xmp.rating;
    for (const [scheme, value] of Object.entries(xmp.identifiers)) meta.identifiers[scheme] = value;
    for (const candidate of xmp.isbnCandidates) addIsbn(meta, candidate);
  }
  addIsbn(meta, custom('ISBN'));
  if (meta.isbn13) meta.identifiers.isbn13 ??= meta.isbn13;
  if (meta.isbn10) meta.identifiers.isbn10 ??= meta.isbn10;
  for (const [scheme, field] of Object.entries(SCHEME_FIELDS)) {
    const value = clean(meta.identifiers[scheme]);
    if (value) meta[field] = value;
  }
  return meta;
}

/** pdf.js hands custom Info values that are PDF names over as `{ name }` objects. */
function isPdfName(value: unknown): value is { name: string } {
  return typeof value === 'object' && value !== null && typeof (value as { name?: unknown }).name === 'string';
}

/** Keywords are free text; commas and semicolons are the separators people actually use. */
function splitKeywords(value: string | undefined): string[] {
  return value ? uniqueList(value.split(/\s*[,;]\s*/)) : [];
}

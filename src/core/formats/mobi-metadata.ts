// EXTH records (and the header fallbacks) of a MOBI book → ExtractedMetadata.
import { decodeNumericReferences, htmlToText } from './epub-html.ts';
import { addIdentifier } from './epub-identifiers.ts';
import { decodeMobiText, type MobiHeader } from './mobi-header.ts';
import { languageOfLocale } from './mobi-locale.ts';
import { emptyMetadata, type ExtractedMetadata } from './types.ts';
import { clean, normalizeDate, splitPeople, uniqueList } from './values.ts';

/** EXTH record types we read (from the MobileRead wiki's EXTH table). */
export const EXTH = {
  author: 100,
  publisher: 101,
  description: 103,
  isbn: 104,
  subject: 105,
  publishingDate: 106,
  asin: 113,
  fixedLayout: 122,
  coverOffset: 201,
  thumbnailOffset: 202,
  updatedTitle: 503,
  language: 524,
} as const;

export interface MobiMetadata {
  metadata: ExtractedMetadata;
  fixedLayout: boolean;
}

export function exthStrings(header: MobiHeader, type: number): string[] {
  return (header.exth.get(type) ?? []).map((bytes) => decodeNumericReferences(decodeMobiText(bytes, header.textEncoding)));
}

function first(header: MobiHeader, type: number): string | undefined {
  return exthStrings(header, type).map((v) => clean(v)).find(Boolean);
}

/** A 4-byte big-endian number record (cover and thumbnail offsets). */
export function exthNumber(header: MobiHeader, type: number): number | undefined {
  const bytes = header.exth.get(type)?.[0];
  return bytes && bytes.length >= 4 ? bytes.readUInt32BE(0) : undefined;
}

export function readMobiMetadata(header: MobiHeader, databaseName: string): MobiMetadata {
  const meta = emptyMetadata();
  meta.title = first(header, EXTH.updatedTitle) ?? clean(header.fullName) ?? clean(databaseName);
  meta.authors = uniqueList(exthStrings(header, EXTH.author).flatMap(splitPeople));
  meta.publisher = first(header, EXTH.publisher);
  meta.description = htmlToText(exthStrings(header, EXTH.description).find((v) => clean(v)));
  meta.categories = uniqueList(exthStrings(header, EXTH.subject));
  meta.publishedDate = normalizeDate(first(header, EXTH.publishingDate));
  meta.language = first(header, EXTH.language) ?? languageOfLocale(header.locale);
  const isbn = first(header, EXTH.isbn);
  if (isbn) addIdentifier(meta, { value: isbn, scheme: 'isbn' });
  const asin = first(header, EXTH.asin);
  if (asin) addIdentifier(meta, { value: asin, scheme: 'asin' });
  return { metadata: meta, fixedLayout: first(header, EXTH.fixedLayout)?.toLowerCase() === 'true' };
}

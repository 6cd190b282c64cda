// Sorting the identifiers of an OPF (`opf:scheme`, `urn:scheme:`, `scheme:value`, bare ISBNs) into metadata fields.
import type { ExtractedMetadata } from './types.ts';
import { clean, parseIsbn } from './values.ts';

type KnownField = 'asin' | 'googleId' | 'goodreadsId' | 'hardcoverId' | 'comicvineId';

const FIELD_BY_SCHEME: Readonly<Record<string, KnownField>> = {
  asin: 'asin',
  'mobi-asin': 'asin',
  amazon: 'asin',
  google: 'googleId',
  goodreads: 'goodreadsId',
  hardcover: 'hardcoverId',
  comicvine: 'comicvineId',
};

/** ONIX code list 5 values EPUB 3 uses in `identifier-type` refinements. */
const ONIX_SCHEMES: Readonly<Record<string, string>> = { '02': 'isbn', '15': 'isbn', '03': 'gtin', '06': 'doi', '22': 'urn' };

export interface RawIdentifier {
  value: string;
  /** `opf:scheme` or an EPUB 3 `identifier-type` refinement. */
  scheme?: string;
  /** Scheme of that refinement (`onix:codelist5`), which changes how `scheme` reads. */
  schemeScheme?: string;
}

/** Splits `urn:isbn:…`, `isbn:…`, `calibre:12` into scheme and value; URLs and bare values keep no scheme. */
function splitPrefixed(value: string): { scheme?: string; value: string } {
  const urn = value.match(/^urn:([a-z0-9][a-z0-9._-]*):(.+)$/i);
  if (urn?.[1] && urn[2]) return { scheme: urn[1], value: urn[2] };
  const prefixed = value.match(/^([a-z][a-z0-9._-]{0,24}):(?!\/\/)(.+)$/i);
  if (prefixed?.[1] && prefixed[2]) return { scheme: prefixed[1], value: prefixed[2] };
  return { value };
}

function schemeOf(raw: RawIdentifier): { scheme?: string; value: string } {
  const value = raw.value.trim();
  let scheme = clean(raw.scheme)?.toLowerCase();
  if (scheme && raw.schemeScheme?.toLowerCase().startsWith('onix')) scheme = ONIX_SCHEMES[scheme] ?? `onix-${scheme}`;
  if (!scheme) return splitPrefixed(value);
  const nested = splitPrefixed(value);
  // `opf:scheme="ISBN"` around `urn:isbn:978…` or `isbn:978…`: the inner prefix repeats the scheme.
  if (nested.scheme?.toLowerCase() === scheme) return { scheme, value: nested.value };
  return { scheme, value };
}

/** Records one identifier in `identifiers` (first per scheme wins) and in the matching named field. */
export function addIdentifier(meta: ExtractedMetadata, raw: RawIdentifier): void {
  const { scheme: foundScheme, value: foundValue } = schemeOf(raw);
  const value = clean(foundValue);
  if (!value) return;
  let scheme = foundScheme?.toLowerCase();
  if (!scheme || scheme === 'isbn') {
    const isbn = parseIsbn(value);
    const digits = isbn.isbn13 ?? isbn.isbn10;
    if (digits) {
      if (isbn.isbn13 && !meta.isbn13) meta.isbn13 = isbn.isbn13;
      if (isbn.isbn10 && !meta.isbn10) meta.isbn10 = isbn.isbn10;
      meta.identifiers.isbn ??= digits;
      return;
    }
    if (!scheme) {
      // A bare UUID is how most tools write the package's unique identifier.
      if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) scheme = 'uuid';
      else return;
    }
  }
  meta.identifiers[scheme] ??= value;
  const field = FIELD_BY_SCHEME[scheme];
  if (field && !meta[field]) meta[field] = value;
}

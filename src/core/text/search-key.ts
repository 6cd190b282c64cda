// The one form text is compared in when people search: stored keys (book_metadata.search_text and series_key,
// author.name_key) and every query are put through searchKey, so `José`, `Jose\u0301` (decomposed, as EPUBs made on
// macOS often carry it), `JOSE` and `Jose` all meet, as calibre's and Komga's searches let them.

/** Letters Unicode does not decompose into a base letter and a mark, written the way readers type them. */
const FOLDED_LETTERS: Record<string, string> = {
  ß: 'ss', ẞ: 'ss', æ: 'ae', œ: 'oe', ø: 'o', đ: 'd', ð: 'd', ħ: 'h', ı: 'i', ł: 'l', ŀ: 'l', þ: 'th', ŧ: 't', ſ: 's',
};
const FOLDED = new RegExp(`[${Object.keys(FOLDED_LETTERS).join('')}]`, 'g');
const MARKS = /\p{M}+/gu;
const SPACES = /\s+/g;

/**
 * Lower case, accents and other marks removed, compatibility forms unified (`ﬁ` → `fi`, full-width letters → ASCII),
 * a few letters folded (`ß` → `ss`, `ø` → `o`, `æ` → `ae`), runs of white space made one space, trimmed.
 */
export function searchKey(text: string): string {
  return text.normalize('NFKD').replace(MARKS, '').toLowerCase().replace(FOLDED, (c) => FOLDED_LETTERS[c] as string).replace(SPACES, ' ').trim();
}

/** The key of a value that may be missing: null stays null. */
export function searchKeyOf(text: string | null | undefined): string | null {
  return text === null || text === undefined ? null : searchKey(text);
}

export interface SearchedFields {
  title: string | null | undefined;
  subtitle?: string | null | undefined;
  authors: readonly string[];
  seriesName?: string | null | undefined;
  isbn13?: string | null | undefined;
  isbn10?: string | null | undefined;
}

/** What a book's search finds it by (`book_metadata.search_text`): title, subtitle, authors, series and ISBNs. */
export function bookSearchText(fields: SearchedFields): string {
  return searchKey([fields.title, fields.subtitle, ...fields.authors, fields.seriesName, fields.isbn13, fields.isbn10].filter(Boolean).join(' '));
}

/** A LIKE pattern for "contains the query", on keys; `\` escapes (`… like ? escape '\'`). */
export function containsKeyPattern(query: string): string {
  return `%${searchKey(query).replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

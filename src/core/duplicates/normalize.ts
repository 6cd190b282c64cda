// Keys that make two spellings of the same title, author, ISBN or file name compare equal. Pure functions.

/** Letters NFD does not decompose into a base letter plus marks. */
const FOLDED_LETTERS: Record<string, string> = {
  ø: 'o', Ø: 'O', ł: 'l', Ł: 'L', æ: 'ae', Æ: 'AE', œ: 'oe', Œ: 'OE', ß: 'ss', ẞ: 'SS', đ: 'd', Đ: 'D', ð: 'd', Ð: 'D',
  þ: 'th', Þ: 'Th', ı: 'i', ħ: 'h', Ħ: 'H', ŀ: 'l', Ŀ: 'L',
};
const FOLDED_RE = new RegExp(`[${Object.keys(FOLDED_LETTERS).join('')}]`, 'g');
const MARKS_RE = /\p{M}+/gu;
const PLAIN_ASCII_RE = /^[\x20-\x7e]*$/;
// Every apostrophe-like character; they join words ("don't" → "dont") instead of splitting them.
const APOSTROPHES_RE = /['’‘`´ʼ]/g;
const NON_WORD_RE = /[^\p{L}\p{N}]+/gu;

/** Strips accents and folds special letters: "Émile Zoła" → "Emile Zola". Case is kept. */
export function foldDiacritics(text: string): string {
  if (PLAIN_ASCII_RE.test(text)) return text;
  return text.normalize('NFD').replace(MARKS_RE, '').replace(FOLDED_RE, (c) => FOLDED_LETTERS[c] ?? c).normalize('NFC');
}

/** Lower case, no accents, punctuation as single spaces, trimmed. The base every key below builds on. */
export function simplify(text: string): string {
  return foldDiacritics(text).toLowerCase().replace(/&/g, ' and ').replace(APOSTROPHES_RE, '').replace(NON_WORD_RE, ' ').trim();
}

/**
 * Articles dropped from the start of a title. "i" (Italian) is left out on purpose: it would turn "I, Robot" into "robot".
 * Elided forms (l', d', dell') are handled separately, before apostrophes are removed.
 */
export const LEADING_ARTICLES: ReadonlySet<string> = new Set([
  // English
  'the', 'a', 'an',
  // French
  'le', 'la', 'les', 'un', 'une',
  // German
  'der', 'die', 'das', 'ein', 'eine',
  // Spanish
  'el', 'los', 'las', 'una',
  // Italian
  'il', 'lo', 'gli', 'uno',
  // Portuguese
  'o', 'os', 'as', 'um', 'uma',
  // Dutch
  'de', 'het', 'een',
]);
const ELIDED_ARTICLE_RE = /^(?:l|gl|un)['’]\s*/i;

/** Where a subtitle starts: a colon (not one between digits, as in "10:04"), or a dash with spaces around it. */
const SUBTITLE_RE = /\s*(?:(?<!\d):|:(?!\d)|\s[-–—]\s)/;
/** Trailing bracketed notes: "(Unabridged)", "[Illustrated Edition]", "{sic}". */
const BRACKETS_RE = /\s*[([{][^()[\]{}]*[)\]}]/g;

/** The main title without subtitle or bracketed notes; the whole text when cutting would leave nothing. */
export function mainTitle(title: string): string {
  let text = title.trim();
  let previous: string;
  do {
    previous = text;
    text = text.replace(BRACKETS_RE, '').trim();
  } while (text !== previous);
  if (text === '') text = title.trim();
  const cut = SUBTITLE_RE.exec(text);
  if (cut && cut.index > 0) {
    const head = text.slice(0, cut.index).trim();
    if (simplify(head) !== '') text = head;
  }
  return text;
}

/**
 * Title key for TITLE_AUTHOR matching: case, accents, punctuation, subtitle (after ":" or " - "), bracketed notes
 * and one leading article ignored. "The Hobbit: or There and Back Again" and "Hobbit" give "hobbit".
 */
export function normalizeTitle(title: string | null | undefined): string {
  if (!title) return '';
  const main = mainTitle(title).replace(ELIDED_ARTICLE_RE, '');
  const words = simplify(main).split(' ').filter((w) => w !== '');
  if (words.length > 1 && LEADING_ARTICLES.has(words[0] as string)) words.shift();
  return words.join(' ');
}

const NAME_SUFFIXES: ReadonlySet<string> = new Set(['jr', 'sr', 'ii', 'iii', 'iv', 'phd', 'md', 'esq']);

/**
 * Author key: order, initials and punctuation do not matter. "Tolkien, J. R. R.", "J.R.R. Tolkien", "J. R. R. Tolkien"
 * and "JRR Tolkien" all give "j r r tolkien" (the name's parts, sorted). Suffixes such as "Jr." are dropped.
 */
export function normalizeAuthor(name: string | null | undefined): string {
  if (!name) return '';
  const folded = foldDiacritics(name).replace(APOSTROPHES_RE, '');
  const allCaps = folded === folded.toUpperCase();
  const tokens = folded.split(NON_WORD_RE).filter((t) => t !== '');
  const named = tokens.filter((t) => !NAME_SUFFIXES.has(t.toLowerCase()));
  const parts: string[] = [];
  for (const raw of named.length > 0 ? named : tokens) {
    // Run-together initials: "JRR", "CS" (only when the name is not written in capitals throughout).
    if (!allCaps && raw.length > 1 && raw.length <= 3 && /^\p{Lu}+$/u.test(raw)) parts.push(...raw.toLowerCase());
    else parts.push(raw.toLowerCase());
  }
  return parts.sort().join(' ');
}

/** ISBN-10 → ISBN-13 (978 prefix, new check digit); undefined when the input is not 10 characters. */
export function isbn10To13(isbn10: string): string | undefined {
  if (!/^\d{9}[\dXx]$/.test(isbn10)) return undefined;
  const body = `978${isbn10.slice(0, 9)}`;
  let total = 0;
  for (let i = 0; i < body.length; i++) total += Number(body[i]) * (i % 2 === 0 ? 1 : 3);
  return `${body}${(10 - (total % 10)) % 10}`;
}

/**
 * ISBN key: the ISBN-13 with hyphens and spaces removed, or the ISBN-10 converted when there is no usable ISBN-13
 * (an ISBN-10 stored in the ISBN-13 field is converted too). Empty when neither looks like an ISBN, so placeholder
 * values such as "N/A" never group books.
 */
export function isbnKey(isbn13: string | null | undefined, isbn10: string | null | undefined): string {
  const clean = (v: string | null | undefined): string => (v ?? '').replace(/[\s-]/g, '').toUpperCase();
  for (const candidate of [clean(isbn13), clean(isbn10)]) {
    if (/^\d{13}$/.test(candidate)) return candidate;
    const converted = isbn10To13(candidate);
    if (converted) return converted;
  }
  return '';
}

/** External ids as `source:value` keys; blank values are skipped. ASINs compare without case. */
export function externalIdKeys(ids: { goodreads?: string | null; hardcover?: string | null; google?: string | null; asin?: string | null; audible?: string | null; comicvine?: string | null }): string[] {
  const out: string[] = [];
  const add = (prefix: string, value: string | null | undefined, upper = false): void => {
    const v = value?.trim();
    if (v) out.push(`${prefix}:${upper ? v.toUpperCase() : v}`);
  };
  add('goodreads', ids.goodreads);
  add('hardcover', ids.hardcover);
  add('google', ids.google);
  add('asin', ids.asin, true);
  add('audible', ids.audible, true);
  add('comicvine', ids.comicvine);
  return out;
}

/**
 * FILENAME key (Grimmory's rule): the name without its extension, lower-cased, `_` and `-` as spaces, everything but
 * a-z, 0-9 and spaces removed, spaces collapsed. Folder audiobooks keep their whole folder name.
 */
export function normalizeFileName(fileName: string, folderBased = false): string {
  const dot = fileName.lastIndexOf('.');
  const base = !folderBased && dot > 0 ? fileName.slice(0, dot) : fileName;
  return base
    .toLowerCase()
    .replace(/[_-]/g, ' ')
    .replace(/[^a-z0-9\s]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

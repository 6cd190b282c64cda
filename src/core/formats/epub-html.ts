// Turning the HTML found in book descriptions (EPUB, FB2 annotations, MOBI EXTH) into plain text.

const NAMED_ENTITIES: Readonly<Record<string, string>> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ',
  ndash: '–', mdash: '—', hellip: '…', laquo: '«', raquo: '»',
  lsquo: '‘', rsquo: '’', ldquo: '“', rdquo: '”', bull: '•', middot: '·',
  copy: '©', reg: '®', trade: '™', eacute: 'é', egrave: 'è', agrave: 'à', ccedil: 'ç', uuml: 'ü', ouml: 'ö', auml: 'ä', szlig: 'ß',
};

function codePointText(code: number): string | undefined {
  if (!Number.isInteger(code) || code <= 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return undefined;
  return String.fromCodePoint(code);
}

/**
 * Decodes `&#233;` and `&#xE9;`. The shared XML parser leaves numeric character references untouched, so every
 * value read from it passes through here.
 */
export function decodeNumericReferences(value: string): string {
  return value.replace(/&#(x[0-9a-f]+|\d+);/gi, (whole, ref: string) => {
    const code = ref[0] === 'x' || ref[0] === 'X' ? parseInt(ref.slice(1), 16) : parseInt(ref, 10);
    return codePointText(code) ?? whole;
  });
}

function decodeEntities(value: string): string {
  return decodeNumericReferences(value).replace(/&([a-z]+);/gi, (whole, name: string) => NAMED_ENTITIES[name.toLowerCase()] ?? whole);
}

// Tag patterns stop at the next `<` as well as at `>`, so text full of unclosed `<` is scanned in linear time.
/** Opening or closing a block starts a new line; blank lines are dropped afterwards. */
const BLOCK_EDGE = /<\/?(p|div|li|ul|ol|h[1-6]|blockquote|tr|table|section|poem|stanza|v|title|subtitle|cite)\b[^<>]*>/gi;
const LINE_BREAK = /<(br|empty-line)\b[^<>]*>/gi;
const ANY_TAG = /<[^<>]*>/g;

/** Removes every `open … close` span (comments, scripts) by literal searches; an unclosed span runs to the end. */
function removeSpans(text: string, open: RegExp, close: RegExp): string {
  let out = '';
  let position = 0;
  for (;;) {
    open.lastIndex = position;
    const start = open.exec(text);
    if (!start) return out + text.slice(position);
    out += text.slice(position, start.index);
    close.lastIndex = start.index + start[0].length;
    const end = close.exec(text);
    if (!end) return out;
    position = end.index + end[0].length;
  }
}

function removeHiddenContent(html: string): string {
  const withoutComments = removeSpans(html, /<!--/g, /-->/g);
  const withoutScripts = removeSpans(withoutComments, /<script\b/gi, /<\/script\s*>/gi);
  return removeSpans(withoutScripts, /<style\b/gi, /<\/style\s*>/gi);
}

/** Plain text from an HTML fragment: tags dropped, entities decoded, one line per paragraph; undefined when blank. */
export function htmlToText(html: string | undefined): string | undefined {
  if (!html) return undefined;
  const withBreaks = removeHiddenContent(html)
    .replace(BLOCK_EDGE, '\n')
    .replace(LINE_BREAK, '\n')
    .replace(ANY_TAG, '');
  const lines = decodeEntities(withBreaks)
    .split('\n')
    .map((line) => line.replace(/\s+/g, ' ').trim())
    .filter((line) => line !== '');
  return lines.length === 0 ? undefined : lines.join('\n');
}

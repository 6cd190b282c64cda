// A content document made ready for Kobo's reader, as kepubify and Kobo's own conversion do it: every sentence of the
// body in a `<span class="koboSpan" id="kobo.<paragraph>.<segment>">` (images too), the body's content wrapped in
// `div#book-columns > div#book-inner`, and Kobo's style tweak in the head. The document is edited as text, never
// re-serialized: markup outside the inserted elements stays byte for byte as it was, so valid XHTML stays valid.

export interface KepubContentOptions {
  /** Turn hyphenation on everywhere (the Kobo setting `forceEnableHyphenation`). */
  hyphenate?: boolean;
}

/** Where each span starts in the chapter's text, for turning a percentage of a chapter into a span. */
export interface ChapterSpans {
  /** Span ids in document order. */
  ids: string[];
  /** Character offset of each span's text within the chapter's body text. */
  offsets: number[];
  /** Length of the chapter's body text. */
  length: number;
}

export interface KepubContentResult {
  html: string;
  spans: ChapterSpans;
}

const STYLE_HACKS = 'div#book-inner { margin-top: 0; margin-bottom: 0;}';
const HYPHENATION = '* { -webkit-hyphens: auto; hyphens: auto; } h1, h2, h3, h4, h5, h6, td { -webkit-hyphens: none; hyphens: none; }';

/** Elements whose text stays as it is (scripts, styles, preformatted text, media, foreign markup, form controls). */
const KEEP_TEXT = new Set(['script', 'style', 'pre', 'audio', 'video', 'svg', 'math', 'textarea', 'select', 'option', 'title', 'noscript']);
/** A new paragraph number starts with the first span inside these. */
const PARAGRAPHS = new Set(['p', 'ol', 'ul', 'table']);
/** HTML elements that never have an end tag (some EPUBs are written as HTML, not XHTML). */
const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr']);

type Token =
  | { kind: 'text'; raw: string }
  | { kind: 'other'; raw: string }
  | { kind: 'start'; raw: string; name: string; selfClosing: boolean }
  | { kind: 'end'; raw: string; name: string };

const localName = (qualified: string): string => {
  const lower = qualified.toLowerCase();
  const colon = lower.indexOf(':');
  return colon === -1 ? lower : lower.slice(colon + 1);
};

/** The end of a tag starting at `from` (the index after its closing `>`), honouring quoted attribute values. */
function tagEnd(src: string, from: number): number {
  let quote: string | undefined;
  for (let i = from; i < src.length; i++) {
    const c = src[i];
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '>') return i + 1;
  }
  return -1;
}

function endOf(src: string, from: number, terminator: string): number {
  const at = src.indexOf(terminator, from);
  return at === -1 ? src.length : at + terminator.length;
}

/** Splits a document into text, tags and everything else (comments, CDATA, declarations, processing instructions). */
export function* tokens(src: string): Generator<Token> {
  let pos = 0;
  while (pos < src.length) {
    const lt = src.indexOf('<', pos);
    if (lt === -1) {
      yield { kind: 'text', raw: src.slice(pos) };
      return;
    }
    if (lt > pos) yield { kind: 'text', raw: src.slice(pos, lt) };
    let end: number;
    if (src.startsWith('<!--', lt)) {
      end = endOf(src, lt + 4, '-->');
      yield { kind: 'other', raw: src.slice(lt, end) };
    } else if (src.startsWith('<![CDATA[', lt)) {
      end = endOf(src, lt + 9, ']]>');
      yield { kind: 'other', raw: src.slice(lt, end) };
    } else if (src.startsWith('<?', lt)) {
      end = endOf(src, lt + 2, '?>');
      yield { kind: 'other', raw: src.slice(lt, end) };
    } else if (src.startsWith('<!', lt)) {
      // A DOCTYPE may carry an internal subset in brackets.
      let depth = 0;
      end = src.length;
      for (let i = lt + 2; i < src.length; i++) {
        if (src[i] === '[') depth++;
        else if (src[i] === ']') depth--;
        else if (src[i] === '>' && depth <= 0) {
          end = i + 1;
          break;
        }
      }
      yield { kind: 'other', raw: src.slice(lt, end) };
    } else {
      const m = /^<(\/?)([A-Za-z_][\w.:-]*)/.exec(src.slice(lt, lt + 256));
      end = m ? tagEnd(src, lt + m[0].length) : -1;
      if (!m || end === -1) {
        // A lone `<` in text (invalid, but seen): leave it as text.
        yield { kind: 'text', raw: '<' };
        pos = lt + 1;
        continue;
      }
      const raw = src.slice(lt, end);
      const name = localName(m[2] as string);
      if (m[1] === '/') yield { kind: 'end', raw, name };
      else yield { kind: 'start', raw, name, selfClosing: /\/\s*>$/.test(raw) || VOID.has(name) };
    }
    pos = end;
  }
}

/** Sentence ends: `.`, `!`, `?` or `:`, then an optional closing quote or ellipsis, then any whitespace. */
export function sentences(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    i++;
    if (c === '.' || c === '!' || c === '?' || c === ':') {
      if (i < text.length && `'"”’“…`.includes(text[i] as string)) i++;
      while (i < text.length && /\s/.test(text[i] as string)) i++;
      out.push(text.slice(start, i));
      start = i;
    }
  }
  if (start < text.length) out.push(text.slice(start));
  return out;
}

const SPACE_ENTITIES = /&(nbsp|#160|#xa0);/gi;
const isBlank = (raw: string): boolean => raw.replace(SPACE_ENTITIES, ' ').trim() === '';
/** Rough length of the text a reader sees (entities count as one character). */
const textLength = (raw: string): number => raw.replace(/&[#\w]+;/g, '_').length;

function styleElement(cssClass: string, css: string): string {
  return `<style type="text/css" class="${cssClass}">${css}</style>`;
}

/** Converts one XHTML content document. Documents that already carry Kobo spans or divs keep them. */
export function kepubifyContent(src: string, options: KepubContentOptions = {}): KepubContentResult {
  const addSpans = !/class\s*=\s*["'][^"']*\bkoboSpan\b/.test(src);
  const addDivs = !/id\s*=\s*["']book-columns["']/.test(src);
  const styles = styleElement('kobostylehacks', STYLE_HACKS) + (options.hyphenate ? styleElement('kepubify-hyphenate', HYPHENATION) : '');
  const spans: ChapterSpans = { ids: [], offsets: [], length: 0 };
  const out: string[] = [];
  const stack: string[] = [];
  let inBody = false;
  let keep = 0;
  let styled = false;
  let para = 0;
  let seg = 0;
  let nextParagraph = false;

  const span = (inner: string): string => {
    if (nextParagraph) {
      para++;
      seg = 0;
      nextParagraph = false;
    }
    seg++;
    const id = `kobo.${para}.${seg}`;
    spans.ids.push(id);
    spans.offsets.push(spans.length);
    return `<span class="koboSpan" id="${id}">${inner}</span>`;
  };

  for (const token of tokens(src)) {
    if (token.kind === 'start') {
      if (token.name === 'head' && token.selfClosing && !styled) {
        out.push(token.raw.replace(/\s*\/\s*>$/, '>'), styles, '</head>');
        styled = true;
        continue;
      }
      if (token.name === 'body' && !token.selfClosing) {
        if (!styled) {
          // No head element: one goes before the body.
          out.push(`<head>${styles}</head>`);
          styled = true;
        }
        out.push(token.raw);
        stack.push('body');
        inBody = true;
        if (addDivs) out.push('<div id="book-columns"><div id="book-inner">');
        continue;
      }
      if (inBody && keep === 0 && addSpans) {
        if (token.name === 'img') {
          para++;
          seg = 0;
          nextParagraph = false;
          out.push(span(token.raw));
          continue;
        }
        if (PARAGRAPHS.has(token.name)) nextParagraph = true;
      }
      out.push(token.raw);
      if (!token.selfClosing) {
        stack.push(token.name);
        if (KEEP_TEXT.has(token.name)) keep++;
      }
      continue;
    }
    if (token.kind === 'end') {
      if (token.name === 'head' && !styled) {
        out.push(styles);
        styled = true;
      }
      if (token.name === 'body' && inBody) {
        if (addDivs) out.push('</div></div>');
        inBody = false;
      }
      const at = stack.lastIndexOf(token.name);
      if (at !== -1) {
        for (const closed of stack.splice(at)) if (KEEP_TEXT.has(closed)) keep--;
      }
      out.push(token.raw);
      continue;
    }
    if (token.kind === 'text' && inBody && keep === 0 && addSpans) {
      const parent = stack[stack.length - 1];
      for (const sentence of sentences(token.raw)) {
        if (isBlank(sentence) && parent !== 'p') {
          out.push(sentence);
        } else {
          out.push(span(sentence));
          spans.length += textLength(sentence);
        }
      }
      continue;
    }
    out.push(token.raw);
  }
  return { html: out.join(''), spans };
}

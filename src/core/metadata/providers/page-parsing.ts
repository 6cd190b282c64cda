// What the page-scraping providers (Amazon, Goodreads, Douban, Lubimyczytac) share: parsing HTML, reading text and
// embedded JSON out of it, telling a robot check from a page whose layout changed, and the number and date forms
// those sites print.
import { parse, type HTMLElement } from 'node-html-parser';
import { looksLikeChallenge } from '../provider-context.ts';
import { ProviderError, providerChanged } from '../provider.ts';
import { isObject, normalizeLanguage, parseLooseDate, type Json } from '../values.ts';

export type Page = HTMLElement;

export function parsePage(html: string): Page {
  return parse(html, { comment: false });
}

/** Whitespace (non-breaking spaces and bidi marks included) collapsed; undefined when nothing is left. */
export function cleanText(raw: string | undefined | null): string | undefined {
  if (raw === undefined || raw === null) return undefined;
  const text = raw.replace(/[\u200e\u200f\u202a-\u202e]/g, '').replace(/[\s\u00a0]+/g, ' ').trim();
  return text === '' ? undefined : text;
}

export function textOf(el: HTMLElement | null | undefined): string | undefined {
  return el ? cleanText(el.text) : undefined;
}

/** The text of the first selector that matches something non-empty. */
export function firstText(root: HTMLElement, selectors: readonly string[]): string | undefined {
  for (const selector of selectors) {
    const text = textOf(root.querySelector(selector));
    if (text) return text;
  }
  return undefined;
}

export function attrOf(el: HTMLElement | null | undefined, name: string): string | undefined {
  return cleanText(el?.getAttribute(name));
}

/** Every JSON-LD object of the page (arrays and `@graph` flattened); scripts that are not valid JSON are skipped. */
export function jsonLdObjects(root: HTMLElement): Json[] {
  const out: Json[] = [];
  const add = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(add);
    else if (isObject(value)) {
      out.push(value);
      if (Array.isArray(value['@graph'])) value['@graph'].forEach(add);
    }
  };
  for (const script of root.querySelectorAll('script[type="application/ld+json"]')) {
    try {
      add(JSON.parse(script.rawText) as unknown);
    } catch {
      // Sites ship broken JSON-LD now and then; the other sources on the page still count.
    }
  }
  return out;
}

/** Robot checks the generic markers miss: Douban's "abnormal request" and login walls, Amazon's sorry page. */
const EXTRA_CHALLENGE_MARKERS = [/检测到有异常请求/, /sec\.douban\.com/, /accounts\.douban\.com\/passport\/login/, /errors\/validateCaptcha/i, /api-services-support@amazon\.com/i, /just a moment\.\.\./i];

export function isChallengePage(html: string): boolean {
  const head = html.slice(0, 20_000);
  return looksLikeChallenge(html) || EXTRA_CHALLENGE_MARKERS.some((re) => re.test(head));
}

/**
 * The error for a page that lacks what the parser looks for: a robot check or sign-in wall (BLOCKED) when it looks
 * like one, otherwise a page whose layout changed (CHANGED) — never an empty answer that hides the problem.
 */
export function blockedOrChanged(provider: string, html: string, what: string): ProviderError {
  if (isChallengePage(html)) return new ProviderError(provider, 'BLOCKED', 'answered with a robot check or sign-in page instead of results; it is blocking automated requests from this server (try again later)');
  return providerChanged(provider, what);
}

/** A decimal printed either way ("4.5", "4,5"); the first number in the text. */
export function decimalOf(text: string | undefined): number | undefined {
  const m = text ? /(\d+(?:[.,]\d+)?)/.exec(text) : null;
  if (!m?.[1]) return undefined;
  const n = Number(m[1].replace(',', '.'));
  return Number.isFinite(n) ? n : undefined;
}

/** A count printed with thousands separators ("12,345 ratings", "1 234", "12.345"): its digits. */
export function countOf(text: string | undefined): number | undefined {
  const m = text ? /\d[\d,.\s\u00a0]*/.exec(text) : null;
  if (!m) return undefined;
  const digits = m[0].replace(/\D/g, '');
  return digits === '' ? undefined : Number(digits);
}

/** `yyyy-MM-dd` from the forms these sites print, CJK (2011年1月10日) and slashed (2011/1/10) dates included. */
export function pageDate(raw: string | undefined): string | undefined {
  const text = cleanText(raw);
  if (!text) return undefined;
  const cjk = /(\d{4})\s*年\s*(\d{1,2})\s*月(?:\s*(\d{1,2})\s*日)?/.exec(text) ?? /^(\d{4})[/.-](\d{1,2})(?:[/.-](\d{1,2}))?\b/.exec(text);
  if (cjk?.[1] && cjk[2]) return parseLooseDate(`${cjk[1]}-${cjk[2].padStart(2, '0')}-${(cjk[3] ?? '1').padStart(2, '0')}`);
  return parseLooseDate(text);
}

/** `yyyy-MM-dd` → the instant BookReview.date carries (midnight UTC). */
export function dayInstant(day: string | undefined): string | undefined {
  return day ? `${day}T00:00:00Z` : undefined;
}

/** Epoch milliseconds (Goodreads' publication and review times) → an ISO instant. */
export function epochInstant(ms: unknown): string | undefined {
  const n = typeof ms === 'number' ? ms : typeof ms === 'string' && /^-?\d+$/.test(ms) ? Number(ms) : NaN;
  if (!Number.isFinite(n)) return undefined;
  const date = new Date(n);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const LANGUAGE_NAMES: Record<string, string> = {
  english: 'en', french: 'fr', german: 'de', spanish: 'es', italian: 'it', portuguese: 'pt', dutch: 'nl', russian: 'ru',
  polish: 'pl', japanese: 'ja', chinese: 'zh', korean: 'ko', swedish: 'sv', norwegian: 'no', danish: 'da', finnish: 'fi',
  czech: 'cs', hungarian: 'hu', greek: 'el', turkish: 'tr', arabic: 'ar', hebrew: 'he', ukrainian: 'uk', romanian: 'ro',
  // As the Polish and Chinese sites print them.
  polski: 'pl', angielski: 'en', niemiecki: 'de', francuski: 'fr', rosyjski: 'ru', hiszpański: 'es', włoski: 'it', japoński: 'ja',
  中文: 'zh', 英文: 'en', 日文: 'ja', 英语: 'en', 日语: 'ja',
};

/** A language as the sites print it ("English", "polski", "eng", "en-US") → ISO 639-1 where known. */
export function languageOf(raw: string | undefined): string | undefined {
  const text = cleanText(raw)?.toLowerCase();
  if (!text) return undefined;
  return LANGUAGE_NAMES[text] ?? normalizeLanguage(text);
}

/** "Title: Subtitle" → both parts (Amazon and Goodreads print them joined). */
export function splitTitle(full: string | undefined): { title?: string; subtitle?: string } {
  if (!full) return {};
  const at = full.indexOf(':');
  if (at <= 0) return { title: full.trim() };
  const subtitle = full.slice(at + 1).trim();
  return { title: full.slice(0, at).trim(), ...(subtitle ? { subtitle } : {}) };
}

/** Words of a search term stripped of punctuation, as the sites' own search boxes expect. */
export function searchWords(...parts: (string | undefined)[]): string {
  return parts
    .filter((p): p is string => typeof p === 'string')
    .join(' ')
    .split(/\s+/)
    .map((word) => word.replace(/[^\p{L}\p{M}\p{N}]/gu, ''))
    .filter((word) => word !== '')
    .join(' ');
}

/**
 * The JSON object literal that starts at the first `{` after `from` in a script (`window.__DATA__ = {...};`), found
 * by matching braces outside strings so that statements after it do not spoil the parse.
 */
export function embeddedJsonObject(script: string, from = 0): unknown {
  const start = script.indexOf('{', from);
  if (start < 0) return undefined;
  let depth = 0;
  let quote: string | undefined;
  for (let i = start; i < script.length; i++) {
    const ch = script[i];
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = undefined;
      continue;
    }
    if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '{') depth++;
    else if (ch === '}' && --depth === 0) {
      try {
        return JSON.parse(script.slice(start, i + 1)) as unknown;
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

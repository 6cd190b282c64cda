// Small helpers every provider parser needs: reading untyped JSON safely and normalising dates, ISBNs, text and
// language codes into the shapes of MetadataCandidate.

export type Json = Record<string, unknown>;

export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export function asString(v: unknown): string | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v !== 'string') return undefined;
  const t = v.trim();
  return t === '' ? undefined : t;
}

export function asNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'string' && v.trim() !== '') {
    const n = Number(v.trim());
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

export function asInt(v: unknown): number | undefined {
  const n = asNumber(v);
  return n === undefined ? undefined : Math.trunc(n);
}

export function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

export function asStrings(v: unknown): string[] {
  return asArray(v).map(asString).filter((s): s is string => s !== undefined);
}

/** Case-insensitive de-duplication that keeps the first spelling. */
export function uniqueStrings(values: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const value of values) {
    const key = value.trim().toLowerCase();
    if (key === '' || seen.has(key)) continue;
    seen.add(key);
    out.push(value.trim());
  }
  return out;
}

/** Digits (and a final X) only; undefined unless it is a 10- or 13-character ISBN. */
export function cleanIsbn(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  const isbn = raw.toUpperCase().replace(/[^0-9X]/g, '');
  return /^\d{13}$/.test(isbn) || /^\d{9}[\dX]$/.test(isbn) ? isbn : undefined;
}

export function isbnKind(isbn: string): 'isbn13' | 'isbn10' {
  return isbn.length === 13 ? 'isbn13' : 'isbn10';
}

const MONTHS: Record<string, string> = {
  jan: '01', feb: '02', mar: '03', apr: '04', may: '05', jun: '06', jul: '07', aug: '08', sep: '09', oct: '10', nov: '11', dec: '12',
};

/**
 * `yyyy-MM-dd` from the date forms providers use: ISO dates and date-times, `yyyy-MM`, `yyyy`, `March 2004`,
 * `1 Jan 2004`, `Jan 1, 2004`. A missing month or day becomes 01.
 */
export function parseLooseDate(raw: unknown): string | undefined {
  const text = asString(raw);
  if (!text) return undefined;
  let m = /^(\d{4})-(\d{2})-(\d{2})/.exec(text);
  if (m) return validDate(m[1], m[2], m[3]);
  m = /^(\d{4})-(\d{2})$/.exec(text);
  if (m) return validDate(m[1], m[2], '01');
  m = /^(\d{4})$/.exec(text);
  if (m) return validDate(m[1], '01', '01');
  const lower = text.toLowerCase().replace(/[.,]/g, ' ');
  const year = /\b(\d{4})\b/.exec(lower)?.[1];
  if (!year) return undefined;
  const monthName = /\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b/.exec(lower)?.[1];
  const month = monthName ? MONTHS[monthName] : undefined;
  const day = month ? /\b(\d{1,2})\b/.exec(lower.replace(year, ' '))?.[1] : undefined;
  return validDate(year, month ?? '01', (day ?? '1').padStart(2, '0'));
}

function validDate(y: string | undefined, m: string | undefined, d: string | undefined): string | undefined {
  if (!y || !m || !d) return undefined;
  const date = new Date(`${y}-${m}-${d}T00:00:00Z`);
  if (Number.isNaN(date.getTime()) || date.getUTCMonth() + 1 !== Number(m) || date.getUTCDate() !== Number(d)) return undefined;
  return `${y}-${m}-${d}`;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', '#39': "'" };

/** HTML (descriptions) → plain text with paragraph breaks kept. */
export function htmlToText(raw: unknown): string | undefined {
  const html = asString(raw);
  if (!html) return undefined;
  const text = html
    .replace(/<\s*br\s*\/?>/gi, '\n')
    .replace(/<\/\s*(p|div|li|h[1-6])\s*>/gi, '\n\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+|#39);/gi, (whole, name: string) => {
      if (name.startsWith('#x') || name.startsWith('#X')) return String.fromCodePoint(parseInt(name.slice(2), 16));
      if (name.startsWith('#') && name !== '#39') return String.fromCodePoint(Number(name.slice(1)));
      return ENTITIES[name.toLowerCase()] ?? whole;
    })
    .replace(/[ \t]+/g, ' ')
    .replace(/ *\n */g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return text === '' ? undefined : text;
}

/** ISO 639-2 (and MARC) codes providers use → ISO 639-1, as Grimmory stores languages. */
const LANGUAGE_CODES: Record<string, string> = {
  eng: 'en', fre: 'fr', fra: 'fr', ger: 'de', deu: 'de', spa: 'es', ita: 'it', por: 'pt', dut: 'nl', nld: 'nl', rus: 'ru',
  pol: 'pl', jpn: 'ja', chi: 'zh', zho: 'zh', kor: 'ko', swe: 'sv', nor: 'no', dan: 'da', fin: 'fi', cze: 'cs', ces: 'cs',
  hun: 'hu', gre: 'el', ell: 'el', tur: 'tr', ara: 'ar', heb: 'he', hin: 'hi', ukr: 'uk', lat: 'la', cat: 'ca', rum: 'ro',
  ron: 'ro', bul: 'bg', hrv: 'hr', srp: 'sr', slo: 'sk', slk: 'sk', slv: 'sl', ice: 'is', isl: 'is', per: 'fa', fas: 'fa',
  vie: 'vi', tha: 'th', ind: 'id', may: 'ms', msa: 'ms', est: 'et', lav: 'lv', lit: 'lt',
};

export function normalizeLanguage(raw: unknown): string | undefined {
  const code = asString(raw)?.toLowerCase();
  if (!code) return undefined;
  const bare = code.replace(/^\/languages\//, '');
  if (/^[a-z]{2}$/.test(bare)) return bare;
  if (/^[a-z]{2}[-_][a-z]{2,4}$/.test(bare)) return bare.slice(0, 2);
  return LANGUAGE_CODES[bare] ?? bare;
}

/** Only http(s) URLs, upgraded to https when the host serves both (cover CDNs do). */
export function httpsUrl(raw: unknown): string | undefined {
  const text = asString(raw);
  if (!text) return undefined;
  if (text.startsWith('//')) return `https:${text}`;
  if (!/^https?:\/\//i.test(text)) return undefined;
  return text.replace(/^http:\/\//i, 'https://');
}

/** Drops the undefined properties so a candidate only carries what the provider knew. */
export function compact<T extends object>(value: T): T {
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (v === undefined) continue;
    if (Array.isArray(v) && v.length === 0) continue;
    out[key] = v;
  }
  return out as T;
}

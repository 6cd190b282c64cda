// Kobo's timestamp spelling: UTC with seven fraction digits (`2025-01-02T10:00:00.0000000Z`), as the store writes them.

/** The last instant written and its spelling: a sync page stamps hundreds of properties with the same `now`. */
let last = { time: Number.NaN, text: '' };

/** `date` as Kobo writes instants. */
export function koboTimestamp(date: Date = new Date()): string {
  const time = date.getTime();
  if (time !== last.time) last = { time, text: `${date.toISOString().slice(0, 19)}.${String(date.getUTCMilliseconds()).padStart(3, '0')}0000Z` };
  return last.text;
}

/**
 * An instant from what a device or the catalog holds: ISO-8601 with any number of fraction digits, with `Z` or an
 * offset, or a zone-less `yyyy-MM-dd HH:mm:ss[.f]` read as UTC. Undefined for blanks, `null` and anything else.
 */
export function parseKoboTime(value: string | null | undefined): Date | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (text === '' || text.toLowerCase() === 'null') return undefined;
  const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|[+-]\d{2}:?\d{2})?$/i.exec(text);
  if (!m) return undefined;
  const [, day, hm, sec = '00', fraction = '', zone] = m;
  const millis = fraction.slice(0, 3).padEnd(3, '0');
  const offset = zone === undefined || zone.toUpperCase() === 'Z' ? 'Z' : zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone;
  const time = Date.parse(`${day}T${hm}:${sec}.${millis}${offset}`);
  return Number.isNaN(time) ? undefined : new Date(time);
}

/** How the catalog writes instants (`toISOString`): Kobo's spelling is these 23 characters and `0000Z`. */
const CATALOG_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const digits = (text: string, from: number, count: number): number => {
  let n = 0;
  for (let i = from; i < from + count; i++) n = n * 10 + text.charCodeAt(i) - 48;
  return n;
};

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Whether text of CATALOG_INSTANT's shape names a real instant, as toISOString would spell it: month, day (30 February
 * is none), hour, minute and second in range. Arithmetic on the digits: a page checks two hundred of them.
 */
function realInstant(text: string): boolean {
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > (month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] as number))) return false;
  return digits(text, 11, 2) < 24 && digits(text, 14, 2) < 60 && digits(text, 17, 2) < 60;
}

/**
 * A catalog instant (a book's `added_on`) as Kobo writes it, or undefined when it is none. The catalog's own spelling
 * is rewritten as text: a page spells a hundred of them, each different, and going through a Date for each would also
 * keep evicting the page's `now` from koboTimestamp's one-entry memory.
 */
export function koboTimeOf(value: string | null | undefined): string | undefined {
  if (typeof value === 'string' && CATALOG_INSTANT.test(value) && realInstant(value)) return `${value.slice(0, 23)}0000Z`;
  const date = parseKoboTime(value);
  return date ? koboTimestamp(date) : undefined;
}

/** A timestamp as Kobo writes it, truncated to the second; text that is no timestamp is returned unchanged. */
export function normalizeKoboTime(value: string | null | undefined): string | null | undefined {
  const date = parseKoboTime(value);
  if (!date) return value;
  return koboTimestamp(new Date(Math.floor(date.getTime() / 1000) * 1000));
}

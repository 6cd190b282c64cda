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

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Whether text of CATALOG_INSTANT's shape names a real instant, as toISOString would spell it: month, day (30 February
 * is none), hour, minute and second in range. Arithmetic on the character codes (48 is `0`), written out: a page
 * checks a hundred of them, most often while its code still runs unoptimized, where a helper per field cost a call
 * each (and was hot enough to be compiled twice within a device's first session).
 */
function realInstant(text: string): boolean {
  const month = (text.charCodeAt(5) - 48) * 10 + text.charCodeAt(6) - 48;
  const day = (text.charCodeAt(8) - 48) * 10 + text.charCodeAt(9) - 48;
  if (month < 1 || month > 12 || day < 1) return false;
  if (day > (DAYS_IN_MONTH[month - 1] as number)) {
    if (month !== 2 || day !== 29) return false;
    const year = (text.charCodeAt(0) - 48) * 1000 + (text.charCodeAt(1) - 48) * 100 + (text.charCodeAt(2) - 48) * 10 + text.charCodeAt(3) - 48;
    if (year % 4 !== 0 || (year % 100 === 0 && year % 400 !== 0)) return false;
  }
  return (
    (text.charCodeAt(11) - 48) * 10 + text.charCodeAt(12) - 48 < 24 &&
    (text.charCodeAt(14) - 48) * 10 + text.charCodeAt(15) - 48 < 60 &&
    (text.charCodeAt(17) - 48) * 10 + text.charCodeAt(18) - 48 < 60
  );
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

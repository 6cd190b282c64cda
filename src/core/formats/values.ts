// Small pure helpers every extractor uses to turn free-form file metadata into clean values.
import type { ExtractedMetadata } from './types.ts';

/** Trims, collapses whitespace; blank becomes undefined. */
export function clean(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  const s = String(value).replace(/\s+/g, ' ').trim();
  return s === '' ? undefined : s;
}

/** Unique non-blank strings in first-seen order. */
export function uniqueList(values: Iterable<unknown>): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const v of values) {
    const c = clean(v);
    if (c && !seen.has(c.toLowerCase())) {
      seen.add(c.toLowerCase());
      out.push(c);
    }
  }
  return out;
}

function isbn10Valid(d: string): boolean {
  if (!/^\d{9}[\dX]$/.test(d)) return false;
  let sum = 0;
  for (let i = 0; i < 10; i++) sum += (d[i] === 'X' ? 10 : Number(d[i])) * (10 - i);
  return sum % 11 === 0;
}

function isbn13Valid(d: string): boolean {
  if (!/^\d{13}$/.test(d)) return false;
  let sum = 0;
  for (let i = 0; i < 13; i++) sum += Number(d[i]) * (i % 2 === 0 ? 1 : 3);
  return sum % 10 === 0;
}

/** Recognises an ISBN in free text ("urn:isbn:978-…", "ISBN 0-306-40615-2"); invalid checksums are rejected. */
export function parseIsbn(value: string | undefined): { isbn10?: string; isbn13?: string } {
  if (!value) return {};
  const digits = value.toUpperCase().replace(/^URN:ISBN:/, '').replace(/^ISBN[-: ]*(1[03])?:?/, '').replace(/[\s-]/g, '');
  const m13 = digits.match(/97[89]\d{10}/);
  if (m13 && isbn13Valid(m13[0])) return { isbn13: m13[0] };
  const m10 = digits.match(/\d{9}[\dX]/);
  if (m10 && isbn10Valid(m10[0])) return { isbn10: m10[0] };
  return {};
}

/** Puts an ISBN into the right field of `meta` (first found wins). */
export function addIsbn(meta: ExtractedMetadata, value: string | undefined): void {
  const { isbn10, isbn13 } = parseIsbn(value);
  if (isbn13 && !meta.isbn13) meta.isbn13 = isbn13;
  if (isbn10 && !meta.isbn10) meta.isbn10 = isbn10;
}

/** ISO `yyyy-MM-dd` from the usual shapes: `2020`, `2020-05`, `2020-05-17T…`, PDF `D:20200517…`, `17.05.2020`. */
export function normalizeDate(value: string | undefined): string | undefined {
  const v = clean(value);
  if (!v) return undefined;
  let m = v.match(/^D?:?(\d{4})(\d{2})?(\d{2})?/);
  if (v.startsWith('D:') && m) return `${m[1]}-${m[2] ?? '01'}-${m[3] ?? '01'}`;
  m = v.match(/^(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?/);
  if (m) return iso(m[1], m[2], m[3]);
  m = v.match(/^(\d{1,2})[./](\d{1,2})[./](\d{4})$/);
  if (m) return iso(m[3], m[2], m[1]);
  const parsed = Date.parse(v);
  if (!Number.isNaN(parsed)) return new Date(parsed).toISOString().slice(0, 10);
  return undefined;
}

function iso(y: string | undefined, mo: string | undefined, d: string | undefined): string | undefined {
  const year = Number(y);
  const month = Number(mo ?? 1);
  const day = Number(d ?? 1);
  if (!year || month < 1 || month > 12 || day < 1 || day > 31) return undefined;
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/** A series index such as "3", "2.5" or "Vol. 4"; undefined when there is no number. */
export function parseNumber(value: unknown): number | undefined {
  const v = clean(value);
  if (!v) return undefined;
  const m = v.replace(',', '.').match(/-?\d+(\.\d+)?/);
  if (!m) return undefined;
  const n = Number(m[0]);
  return Number.isFinite(n) ? n : undefined;
}

/** Natural order: "page2" before "page10", case-insensitive. */
let collator: Intl.Collator | undefined;
export function naturalCompare(a: string, b: string): number {
  // Built on first use: a collator pulls ICU collation data into memory, which the daemon rarely needs.
  collator ??= new Intl.Collator('en', { numeric: true, sensitivity: 'base' });
  return collator.compare(a, b);
}

/** Splits an author field that packs several names ("A & B", "A; B", "A and B"). Commas are kept: "Last, First" is one name. */
export function splitPeople(value: string | undefined): string[] {
  const v = clean(value);
  if (!v) return [];
  return uniqueList(v.split(/\s*(?:;|&|\band\b|\bund\b|\bet\b)\s*/i));
}

/** Splits a comma-separated list (ComicInfo uses commas for every multi-valued field). */
export function splitCommaList(value: string | undefined): string[] {
  const v = clean(value);
  if (!v) return [];
  return uniqueList(v.split(/\s*,\s*/));
}

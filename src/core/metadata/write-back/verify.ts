// Reading a rewritten file back: what its extractor reports must be what was written.
import type { ExtractedComic, ExtractedMetadata, Extraction } from '../../formats/types.ts';
import { clean, uniqueList } from '../../formats/values.ts';
import { WriteBackError } from './types.ts';

type Value = string | number | boolean | string[] | undefined;

/** Field → the value the extractor should report; absent fields should read as absent, unless listed as soft. */
export type Expectation = Partial<Record<keyof ExtractedMetadata | `comic.${keyof ExtractedComic}`, Value>>;

function normalized(value: unknown): Value {
  if (Array.isArray(value)) {
    const list = uniqueList(value);
    return list.length > 0 ? list : undefined;
  }
  if (typeof value === 'string') return clean(value);
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'boolean') return value;
  return undefined;
}

function same(a: Value, b: Value): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => v === b[i]);
  if (typeof a === 'number' && typeof b === 'number') return Math.abs(a - b) < 1e-6;
  return a === b;
}

function actualOf(extraction: Extraction, field: string): unknown {
  if (field.startsWith('comic.')) return (extraction.comic as unknown as Record<string, unknown> | undefined)?.[field.slice(6)];
  return (extraction.metadata as unknown as Record<string, unknown>)[field];
}

/**
 * Differences between what was written and what the file now says. A field listed in `soft` is only checked when a
 * value was written: the format keeps something there of its own (a required title, an identity identifier).
 */
export function differences(expectation: Expectation, extraction: Extraction, soft: ReadonlySet<string> = new Set()): string[] {
  const out: string[] = [];
  for (const [field, raw] of Object.entries(expectation)) {
    const expected = normalized(raw);
    if (expected === undefined && soft.has(field)) continue;
    const actual = normalized(actualOf(extraction, field));
    if (!same(expected, actual)) out.push(`${field}: wrote ${JSON.stringify(expected ?? null)}, reads ${JSON.stringify(actual ?? null)}`);
  }
  return out;
}

export function assertReadsBack(expectation: Expectation, extraction: Extraction, soft?: ReadonlySet<string>): void {
  const diff = differences(expectation, extraction, soft);
  if (diff.length > 0) throw new WriteBackError('VERIFY_FAILED', `the rewritten file does not read back as written (${diff.slice(0, 5).join('; ')})`);
}

/** The rewritten file as its extractor reads it; one that does not open at all fails the write. */
export async function reopened(extract: (path: string, options: { skipCover: boolean }) => Promise<Extraction>, path: string, what: string): Promise<Extraction> {
  try {
    return await extract(path, { skipCover: true });
  } catch (error) {
    throw new WriteBackError('VERIFY_FAILED', `${what} does not open: ${(error as Error).message}`);
  }
}

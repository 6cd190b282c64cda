// Converted books are kept under <dataDir>/cache/kepub, named by what they were made from (file fingerprint, converter
// version, options), so each EPUB is converted once; the least recently served are dropped past a size budget. A book
// that fails to convert is remembered as such and served as plain EPUB from then on.
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { convertToKepub, type SpanMap } from './kepub.ts';

/** Bumped whenever the conversion changes, so old results are not served. */
const CONVERTER_VERSION = 1;
const DEFAULT_BUDGET_BYTES = 2 * 1024 * 1024 * 1024;

export interface KepubSource {
  path: string;
  /** What identifies the file's content: its hash, size and modification time. */
  fingerprint: string;
  hyphenate: boolean;
}

export type KepubOutcome = { kind: 'converted'; path: string } | { kind: 'failed'; reason: string };

const inFlight = new Map<string, Promise<KepubOutcome>>();

const keyOf = (source: KepubSource): string => createHash('sha256').update(`${CONVERTER_VERSION}\0${source.fingerprint}\0${source.hyphenate ? 1 : 0}`).digest('hex').slice(0, 32);
const spansKeyOf = (fingerprint: string): string => createHash('sha256').update(`${CONVERTER_VERSION}\0${fingerprint}`).digest('hex').slice(0, 32);

export function kepubDir(cacheRoot: string): string {
  return join(cacheRoot, 'kepub');
}

async function exists(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isFile() === true;
}

/** Removes the least recently used conversions (never `keep`) until the folder fits the budget. */
async function trim(dir: string, budget: number, keep: string): Promise<void> {
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.kepub.epub'));
  const files = (await Promise.all(names.map(async (name) => ({ name, info: await stat(join(dir, name)).catch(() => undefined) })))).filter((f) => f.info !== undefined);
  let total = files.reduce((sum, f) => sum + (f.info?.size ?? 0), 0);
  files.sort((a, b) => (a.info?.mtimeMs ?? 0) - (b.info?.mtimeMs ?? 0));
  for (const f of files) {
    if (total <= budget) break;
    if (f.name === keep) continue;
    await rm(join(dir, f.name), { force: true });
    total -= f.info?.size ?? 0;
  }
}

/** The KEPUB of `source`, converting it on first use; concurrent requests for one book share one conversion. */
export async function kepubFor(cacheRoot: string, source: KepubSource, budgetBytes: number = DEFAULT_BUDGET_BYTES): Promise<KepubOutcome> {
  const dir = kepubDir(cacheRoot);
  const key = keyOf(source);
  const path = join(dir, `${key}.kepub.epub`);
  const failedMarker = join(dir, `${key}.failed`);
  if (await exists(path)) {
    const now = new Date();
    await utimes(path, now, now).catch(() => undefined);
    return { kind: 'converted', path };
  }
  if (await exists(failedMarker)) return { kind: 'failed', reason: await readFile(failedMarker, 'utf8').catch(() => 'conversion failed before') };
  const running = inFlight.get(key);
  if (running) return running;
  const work = (async (): Promise<KepubOutcome> => {
    await mkdir(dir, { recursive: true });
    try {
      const spans = await convertToKepub(source.path, path, { hyphenate: source.hyphenate });
      await writeFile(join(dir, `${spansKeyOf(source.fingerprint)}.spans.json`), JSON.stringify(spans)).catch(() => undefined);
      await trim(dir, budgetBytes, `${key}.kepub.epub`);
      return { kind: 'converted', path };
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      await writeFile(failedMarker, reason).catch(() => undefined);
      return { kind: 'failed', reason };
    }
  })().finally(() => inFlight.delete(key));
  inFlight.set(key, work);
  return work;
}

/** The span map written when the file was last converted, if it was. */
export async function cachedSpanMap(cacheRoot: string, fingerprint: string): Promise<SpanMap | undefined> {
  try {
    return JSON.parse(await readFile(join(kepubDir(cacheRoot), `${spansKeyOf(fingerprint)}.spans.json`), 'utf8')) as SpanMap;
  } catch {
    return undefined;
  }
}

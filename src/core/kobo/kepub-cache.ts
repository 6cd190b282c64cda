// Converted books are kept under <dataDir>/cache/kepub, named by what they were made from (file fingerprint, converter
// version, options), so each EPUB is converted once; the least recently served are dropped past a size budget. A book
// that fails to convert is remembered as such and served as plain EPUB from then on. What each conversion came to (its
// size, or that it failed) is also remembered in memory, so a sync page announces sizes without touching the disk.
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

export type KepubOutcome = { kind: 'converted'; path: string; size: number } | { kind: 'failed'; reason: string };

const inFlight = new Map<string, Promise<KepubOutcome>>();

const keyOf = (source: KepubSource): string => createHash('sha256').update(`${CONVERTER_VERSION}\0${source.fingerprint}\0${source.hyphenate ? 1 : 0}`).digest('hex').slice(0, 32);

const spansKeyOf = (fingerprint: string): string => createHash('sha256').update(`${CONVERTER_VERSION}\0${fingerprint}`).digest('hex').slice(0, 32);

/** What a conversion came to, for `knownKepub`. */
export type KnownKepub = { kind: 'converted'; size: number } | { kind: 'failed' };

/**
 * Outcomes seen by this process, by options and fingerprint: the KEPUB's size, or -1 for a book that cannot be
 * converted. Bounded (past the limit the oldest are forgotten) and cleared whenever the cache drops conversions: a book
 * not found here is looked up on disk again.
 */
const known = new Map<string, number>();
const KNOWN_LIMIT = 20_000;
const FAILED = -1;

const knownName = (source: Pick<KepubSource, 'fingerprint' | 'hyphenate'>): string => `${source.hyphenate ? 1 : 0}\0${source.fingerprint}`;

function remember(source: KepubSource, outcome: KepubOutcome): KepubOutcome {
  const name = knownName(source);
  known.delete(name);
  known.set(name, outcome.kind === 'converted' ? outcome.size : FAILED);
  if (known.size > KNOWN_LIMIT) known.delete(known.keys().next().value as string);
  return outcome;
}

/**
 * What converting a file of this fingerprint came to, when this process has seen it (converted or found converted, or
 * failed): undefined means the cache must be looked at (`kepubFor`).
 */
export function knownKepub(source: Pick<KepubSource, 'fingerprint' | 'hyphenate'>): KnownKepub | undefined {
  const size = known.get(knownName(source));
  if (size === undefined) return undefined;
  return size === FAILED ? { kind: 'failed' } : { kind: 'converted', size };
}

export function kepubDir(cacheRoot: string): string {
  return join(cacheRoot, 'kepub');
}

async function fileSize(path: string): Promise<number | undefined> {
  const info = await stat(path).catch(() => undefined);
  return info?.isFile() ? info.size : undefined;
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
    // Which entry of `known` named it is not kept: all are forgotten (the cache overflows rarely).
    known.clear();
    total -= f.info?.size ?? 0;
  }
}

/** The KEPUB of `source`, converting it on first use; concurrent requests for one book share one conversion. */
export async function kepubFor(cacheRoot: string, source: KepubSource, budgetBytes: number = DEFAULT_BUDGET_BYTES): Promise<KepubOutcome> {
  const dir = kepubDir(cacheRoot);
  const key = keyOf(source);
  const path = join(dir, `${key}.kepub.epub`);
  const failedMarker = join(dir, `${key}.failed`);
  const size = await fileSize(path);
  if (size !== undefined) {
    const now = new Date();
    await utimes(path, now, now).catch(() => undefined);
    return remember(source, { kind: 'converted', path, size });
  }
  if ((await fileSize(failedMarker)) !== undefined) return remember(source, { kind: 'failed', reason: await readFile(failedMarker, 'utf8').catch(() => 'conversion failed before') });
  const running = inFlight.get(key);
  if (running) return running;
  const work = (async (): Promise<KepubOutcome> => {
    await mkdir(dir, { recursive: true });
    try {
      const spans = await convertToKepub(source.path, path, { hyphenate: source.hyphenate });
      await writeFile(join(dir, `${spansKeyOf(source.fingerprint)}.spans.json`), JSON.stringify(spans)).catch(() => undefined);
      const size = (await stat(path)).size;
      await trim(dir, budgetBytes, `${key}.kepub.epub`);
      return remember(source, { kind: 'converted', path, size });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      await writeFile(failedMarker, reason).catch(() => undefined);
      return remember(source, { kind: 'failed', reason });
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

// The other end of `bindery db copy --to`: a PostgreSQL database by URL, or a SQLite file by path (created when it is
// not there, and removed again when the copy into it fails, so a failed copy leaves no half-made catalog file).
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import { compareCatalogs, copyCatalog, type CatalogComparison, type CatalogCopyResult, type CopyCatalogOptions } from './catalog-copy.ts';
import { isDatabaseUrl, redactedLocation } from './engine.ts';
import { openSqliteFile, openStore, type Store } from './store.ts';

/** Where a location points, for telling a catalog from itself: an absolute file path, or the URL without its password. */
export function sameLocation(a: string, b: string): boolean {
  const normal = (location: string): string => (isDatabaseUrl(location) ? redactedLocation(location) : resolve(location));
  return normal(a) === normal(b);
}

async function withTarget<T>(location: string, use: (target: Store) => Promise<T>): Promise<T> {
  if (isDatabaseUrl(location)) {
    const target = await openStore(location, { poolSize: 2 });
    try {
      return await use(target);
    } finally {
      await target.close();
    }
  }
  const path = resolve(location);
  const created = !existsSync(path);
  const target = await openSqliteFile(path);
  let failed = false;
  try {
    return await use(target);
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    await target.close();
    if (failed && created) await Promise.all(['', '-wal', '-shm', '-journal'].map((suffix) => rm(`${path}${suffix}`, { force: true })));
  }
}

export function copyCatalogTo(source: Store, location: string, options: CopyCatalogOptions = {}): Promise<CatalogCopyResult> {
  return withTarget(location, (target) => copyCatalog(source, target, options));
}

export function compareCatalogWith(source: Store, location: string): Promise<CatalogComparison> {
  return withTarget(location, (target) => compareCatalogs(source, target));
}

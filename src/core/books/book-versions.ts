// What was built from a book's rows, kept under the book's version (migration 054): a page of fifty books reads fifty
// versions in one statement and builds again only the books whose version moved, where everything built under the
// catalog's generation is thrown away by any write anywhere.
import type { Store } from '../store/store.ts';
import { batchFilter, type BatchFilter } from './book-bundles.ts';

/** Each book's version (0 for a book without a row: one never written since migration 054). */
async function bookVersions(store: Store, filter: BatchFilter): Promise<Map<number, number>> {
  const rows = (await store.exec.all(`SELECT book_id, version FROM book_version WHERE ${filter.on('book_id')}`, filter.params)) as unknown as { book_id: number; version: number }[];
  const versions = new Map<number, number>();
  for (const row of rows) versions.set(Number(row.book_id), Number(row.version));
  return versions;
}

/**
 * Values built from books' rows, each under the version it was read at; beyond `limit` books, the least recently used
 * go. Read the versions BEFORE the rows a value is built from: a write committed between the two then only makes the
 * value look older than it is, never newer.
 */
export class KeptByVersion<V> {
  private readonly kept = new Map<number, { version: number; value: V }>();
  private readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  get(bookId: number, version: number): V | undefined {
    const kept = this.kept.get(bookId);
    if (kept === undefined || kept.version !== version) return undefined;
    this.kept.delete(bookId);
    this.kept.set(bookId, kept);
    return kept.value;
  }

  set(bookId: number, version: number, value: V): void {
    this.kept.delete(bookId);
    this.kept.set(bookId, { version, value });
    if (this.kept.size > this.limit) this.dropOldest();
  }

  /**
   * The least recently used quarter, in one walk from the start of the map's order: dropping one book for each book
   * kept would walk again, every time, past the holes that moved and dropped entries leave at the start of the map.
   */
  private dropOldest(): void {
    let drop = this.kept.size - Math.floor((this.limit * 3) / 4);
    for (const id of this.kept.keys()) {
      if (drop-- <= 0) break;
      this.kept.delete(id);
    }
  }

  get size(): number {
    return this.kept.size;
  }
}

const perStore = new WeakMap<Store, Map<string, KeptByVersion<unknown>>>();

/** The values of one kind kept for one catalog (book ids and versions mean nothing across catalogs). */
export function keptByVersion<V>(store: Store, kind: string, limit: number): KeptByVersion<V> {
  let kinds = perStore.get(store);
  if (!kinds) perStore.set(store, (kinds = new Map()));
  let kept = kinds.get(kind);
  if (!kept) kinds.set(kind, (kept = new KeptByVersion<unknown>(limit)));
  return kept as KeptByVersion<V>;
}

/** What was built of one book: its value, and whether it may be kept (not where it shows the time of the page). */
export interface Built<V> {
  id: number;
  value: V;
  keep: boolean;
}

/**
 * The values of these books (those `build` finds), by id: kept ones whose version still holds, the others built (one
 * call for all of them) and kept under the version read before building. Nothing read inside this process's own open
 * write is kept: it may yet roll back.
 */
export async function keptOrBuilt<V>(store: Store, kept: KeptByVersion<V>, ids: readonly number[], build: (missing: number[]) => Promise<Built<V>[]>): Promise<Map<number, V>> {
  const out = new Map<number, V>();
  if (ids.length === 0) return out;
  const writing = store.writeInFlight();
  const versions = await bookVersions(store, batchFilter(store.dialect, ids));
  const missing: number[] = [];
  for (const id of ids) {
    const value = kept.get(id, versions.get(id) ?? 0);
    if (value !== undefined) out.set(id, value);
    else if (!out.has(id)) missing.push(id);
  }
  if (missing.length === 0) return out;
  const built = await build(missing);
  const keep = !writing && !store.writeInFlight();
  const asked = new Set(missing);
  for (const { id, value, keep: keepable } of built) {
    // A batch read by range may give books not asked for, whose versions were not read.
    if (!asked.has(id)) continue;
    out.set(id, value);
    if (keep && keepable) kept.set(id, versions.get(id) ?? 0, value);
  }
  return out;
}

// Running the app queries: compiled Kysely statements on the raw connection, and results over the whole catalog
// (totals, aggregates) kept until the catalog changes, since a client paging through a list asks for them again.
import { CatalogMemo, cachedStatement } from '../store/snapshot.ts';
import type { Store } from '../store/store.ts';

export interface Compiled {
  sql: string;
  parameters: readonly unknown[];
}

export function rowsOf<T>(store: Store, compiled: Compiled): T[] {
  return cachedStatement(store.sqlite, compiled.sql).all(...(compiled.parameters as unknown[])) as T[];
}

export function columnOf<T>(store: Store, compiled: Compiled): T[] {
  return cachedStatement(store.sqlite, compiled.sql).pluck().all(...(compiled.parameters as unknown[])) as T[];
}

const memos = new WeakMap<Store, CatalogMemo<string, unknown>>();

/** `compute` (which runs `compiled`), or its result from an earlier call while the catalog is unchanged. */
export function remembered<T>(store: Store, compiled: Compiled, compute: () => T): T {
  let memo = memos.get(store);
  if (!memo) memos.set(store, (memo = new CatalogMemo(128)));
  return memo.get(store, `${compiled.sql}\u0000${JSON.stringify(compiled.parameters)}`, compute) as T;
}

/** The single number a counting query returns, remembered. */
export function rememberedCount(store: Store, compiled: Compiled): number {
  return remembered(store, compiled, () => Number(columnOf<number>(store, compiled)[0] ?? 0));
}

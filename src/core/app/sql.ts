// Running the app queries: compiled Kysely statements through the catalog's raw statements (prepared once per text on
// SQLite), and results over the whole catalog (totals, aggregates) kept until the catalog changes, since a client
// paging through a list asks for them again.
import { sql, type RawBuilder } from 'kysely';
import { memosPerOwner } from '../store/snapshot.ts';
import { sourceForSql } from '../store/reading-state.ts';
import { firstColumn, type SqlExec, type SqlValue } from '../store/sql-exec.ts';
import type { Store } from '../store/store.ts';

export interface Compiled {
  sql: string;
  parameters: readonly unknown[];
}

export async function rowsOf<T>(exec: SqlExec, compiled: Compiled): Promise<T[]> {
  return (await exec.all(compiled.sql, compiled.parameters as SqlValue[])) as T[];
}

/** The first column of every row. */
export async function columnOf<T>(exec: SqlExec, compiled: Compiled): Promise<T[]> {
  return firstColumn<T>(await exec.all(compiled.sql, compiled.parameters as SqlValue[]));
}

const memos = memosPerOwner<string, unknown>(128);

/** `compute` (which runs `compiled`), or its result from an earlier call while the catalog is unchanged. */
export async function remembered<T>(store: Store, compiled: Compiled, compute: () => Promise<T>): Promise<T> {
  // A write of this process still open may roll back: what is read meanwhile is not kept.
  if (store.writeInFlight()) return compute();
  const memo = memos(store);
  // Kept under the reading state's generation too when the statement reads it (read-status filters, progress sorts).
  return memo.getAsync(sourceForSql(store, compiled.sql), `${compiled.sql}\u0000${JSON.stringify(compiled.parameters)}`, compute) as Promise<T>;
}

/**
 * The single number a counting query returns, remembered. Counting runs over the whole catalog (tens of ms at 100,000
 * books), so it is read aside: other requests are answered meanwhile.
 */
export function rememberedCount(store: Store, compiled: Compiled): Promise<number> {
  return remembered(store, compiled, async () => Number(firstColumn<number>(await store.readAside(compiled.sql, compiled.parameters as SqlValue[]))[0] ?? 0));
}

/**
 * A sort direction with NULLs where SQLite puts them by default (first ascending, last descending), said explicitly so
 * PostgreSQL (the opposite default) gives the same order. SQLite treats these spellings as its default order.
 */
export const direction = (descending: boolean): RawBuilder<unknown> => sql.raw(descending ? 'DESC NULLS LAST' : 'ASC NULLS FIRST');


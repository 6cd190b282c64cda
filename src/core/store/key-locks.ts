// Writers that must take turns on one part of the catalog (a library folder being scanned and imported into) without
// locking whole tables: a lock by name, held until the write transaction ends, across every process sharing the catalog.
import type { WriteScope } from './store.ts';
import { dialectOf } from './dialect.ts';

/** Waits until no other write transaction holds `key`, then holds it until this transaction commits or rolls back. */
export async function lockKeyForTransaction(scope: WriteScope, key: string): Promise<void> {
  const statement = dialectOf(scope.db).transactionKeyLock;
  if (statement) await scope.exec.run(statement, [key]);
}

/** The key of a library folder: its catalog rows (book files at a place, books grouped by folder) are decided under it. */
export const libraryPathKey = (libraryPathId: number): string => `library-path:${libraryPathId}`;

// Writers that must take turns on one part of the catalog (a library folder being scanned and imported into, a book
// being moved) without locking whole tables: a lock by name, held until the write transaction ends, across every
// process sharing the catalog.
import type { Transaction } from 'kysely';
import type { DB } from './db-types.ts';
import { dialectOf } from './dialect.ts';
import { kyselyExec } from './sql-exec.ts';

/** Waits until no other write transaction holds `key`, then holds it until this transaction commits or rolls back. */
export async function lockKeyForTransaction(trx: Transaction<DB>, key: string): Promise<void> {
  const statement = dialectOf(trx).transactionKeyLock;
  if (statement) await kyselyExec(trx).run(statement, [key]);
}

/** The key of a library folder: its catalog rows (book files at a place, books grouped by folder) are decided under it. */
export const libraryPathKey = (libraryPathId: number): string => `library-path:${libraryPathId}`;

/** The key of a book whose files are being moved. */
export const bookMoveKey = (bookId: number): string => `book-move:${bookId}`;

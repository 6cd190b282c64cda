// A separate writer process for the concurrency test: reads then writes in many small transactions.
import { openStore } from '../../src/core/store/store.ts';

const [catalog, prefix, countArg] = process.argv.slice(2);
const count = Number(countArg);
const store = await openStore(catalog as string);
try {
  for (let i = 0; i < count; i++) {
    await store.db.transaction().execute(async (trx) => {
      // Read first, then write: the pattern that fails at once with SQLITE_BUSY under deferred transactions.
      const before = await trx.selectFrom('library').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      // Hold the transaction open a moment, as real work between reading and writing does.
      await new Promise((resolve) => setTimeout(resolve, 1));
      const lib = await trx.insertInto('library').values({ name: `${prefix}-${i}` }).returning('id').executeTakeFirstOrThrow();
      const book = await trx.insertInto('book').values({ library_id: lib.id }).returning('id').executeTakeFirstOrThrow();
      await trx.insertInto('book_metadata').values({ book_id: book.id, title: `${prefix} book ${i} after ${before.n}` }).execute();
    });
  }
  process.stdout.write(`done ${count}\n`);
} finally {
  await store.close();
}

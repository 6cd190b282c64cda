// The copy behind `bindery db copy`, backups on PostgreSQL and restores onto it: before the target commits, every table
// is read back and compared with what was read from the source, so a value the target changed on its way in (a lossy
// driver or column type) is caught and nothing is written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatalogCopyError, copyCatalog, isEmptyCatalog, RowDigest } from '../../../src/core/store/catalog-copy.ts';
import type { SqlExec } from '../../../src/core/store/sql-exec.ts';
import { openSqliteFile, openStore, type Store } from '../../../src/core/store/store.ts';
import { seedBook, seedLibrary } from '../../helpers/catalog-seed.ts';
import { makeTempDir, type TempDir } from '../../helpers/temp-dir.ts';

let tmp: TempDir;
let source: Store;

beforeAll(async () => {
  tmp = makeTempDir('bindery-catalog-copy-');
  source = await openStore(tmp.file('source/bindery.sqlite'));
  const libraryId = await seedLibrary(source.db, tmp.file('books'), 'Books');
  for (let i = 0; i < 30; i++) await seedBook(source.db, libraryId, { title: `Book ${i}`, authors: ['An Author'] });
});
afterAll(async () => {
  await source.close();
  tmp.remove();
});

/** The store, except that text written into `table` has `from` replaced by `to` on its way in. */
function lossy(store: Store, from: string, to: string): Store {
  const alter = (exec: SqlExec): SqlExec => ({
    ...exec,
    get: exec.get.bind(exec),
    all: exec.all.bind(exec),
    run: (sql, params = []) => exec.run(sql, sql.startsWith('insert into "book_metadata"') ? params.map((p) => (typeof p === 'string' ? p.replace(from, to) : p)) : params),
  });
  return { ...store, write: (writer) => store.write((scope) => writer({ ...scope, exec: alter(scope.exec) })) };
}

describe('copyCatalog', () => {
  it('rolls the target back when what it holds differs from what was read', async () => {
    const target = await openSqliteFile(tmp.file('lossy.sqlite'));
    try {
      const failed = await copyCatalog(source, lossy(target, 'Book 17', 'Book 71')).catch((error: unknown) => error);
      expect(failed).toBeInstanceOf(CatalogCopyError);
      expect(failed).toMatchObject({ code: 'CHECKSUM_MISMATCH', message: expect.stringMatching(/^the copy does not match the source, nothing was written: book_metadata: the rows differ/) });
      expect(await isEmptyCatalog(target)).toBe(true);
      // The same copy through an honest target goes through.
      const copied = await copyCatalog(source, target);
      expect(copied.tables.find((t) => t.table === 'book_metadata')).toMatchObject({ rows: 30 });
      expect(await isEmptyCatalog(target)).toBe(false);
    } finally {
      await target.close();
    }
  });

  it('checksums a set of rows whatever their order, and tells one changed value', () => {
    const rows = [
      { id: 1, title: 'a', size: 1.5, blob: null },
      { id: 2, title: 'b', size: -0, blob: Buffer.from('x') },
      { id: 3, title: 'a', size: 2, blob: null },
    ];
    const digest = (list: Record<string, unknown>[]): string => {
      const d = new RowDigest(['blob', 'id', 'size', 'title']);
      for (const row of list) d.add(row);
      return d.checksum;
    };
    expect(digest([...rows].reverse())).toBe(digest(rows));
    expect(digest(rows.map((r) => ({ ...r, id: BigInt(r.id), size: Object.is(r.size, -0) ? 0 : r.size })))).toBe(digest(rows));
    expect(digest(rows.map((r, i) => (i === 1 ? { ...r, title: 'B' } : r)))).not.toBe(digest(rows));
    expect(digest([...rows, rows[0] as Record<string, unknown>])).not.toBe(digest(rows));
  });
});

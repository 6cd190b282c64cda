import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openStore } from '../../src/core/store/store.ts';
import { createUser } from '../../src/core/users/users.ts';
import { fillCatalog } from '../book-catalog.ts';
import { principalFor } from '../../src/core/auth/principal.ts';
import { listedBooks } from '../../src/core/app/book-scope.ts';
const dir = mkdtempSync(join(tmpdir(), 'fo-'));
const store = await openStore(join(dir, 'b.sqlite'));
const adminId = await createUser(store.db, { username: 'admin', password: 'admin-password', name: 'A', permissions: { admin: true } });
fillCatalog(store.sqlite, 100000, join(dir, 'lib'), adminId);
store.sqlite.pragma('optimize');
const p = (await principalFor(store, adminId))!;
const source = listedBooks(store, p).select(['book.id', 'book.library_id', 'm.language', 'm.publisher', 'm.series_name', 'm.page_count', 'm.amazon_rating']);
const ids = listedBooks(store, p).select(['book.id']);
const cpu = (label: string, q: any) => {
  const c = q.compile(store.db); const st = store.sqlite.prepare(c.sql);
  st.all(...c.parameters);
  const t = process.cpuUsage(); const w = performance.now();
  for (let i = 0; i < 3; i++) st.all(...c.parameters);
  const u = process.cpuUsage(t);
  console.log(label.padEnd(40), 'cpu', ((u.user + u.system) / 3000).toFixed(0), 'wall', ((performance.now() - w) / 3).toFixed(0));
};
cpu('scope count', sql`with s as materialized ${source} select count(*) from s`);
cpu('scope ids count', sql`with s as materialized ${ids} select count(*) from s`);
cpu('group language', sql`with s as materialized ${source} select language, count(*) from s group by language`);
cpu('group publisher', sql`with s as materialized ${source} select publisher, count(*) from s group by publisher`);
cpu('buckets one pass 40 sums', sql`with s as materialized ${source} select ${sql.raw(Array.from({ length: 40 }, (_, i) => `sum(page_count >= ${i * 20} and page_count < ${i * 20 + 20})`).join(', '))} from s`);
cpu('categories join', sql`with s as materialized ${source} select n.name, count(distinct s.id) from s join book_metadata_category_mapping x on x.book_id = s.id join category n on n.id = x.category_id group by n.name`);
cpu('categories IN', sql`with s as materialized ${ids} select x.category_id, count(*) from book_metadata_category_mapping x where x.book_id in (select id from s) group by x.category_id`);
cpu('categories IN direct', sql`select x.category_id, count(*) from book_metadata_category_mapping x where x.book_id in ${ids} group by x.category_id`);
cpu('authors IN', sql`with s as materialized ${ids} select x.author_id, count(*) from book_metadata_author_mapping x where x.book_id in (select id from s) group by x.author_id`);
cpu('filetypes', sql`with s as materialized ${ids} select book_type, count(*) from (select distinct f.book_type, f.book_id from book_file f where f.is_book = 1 and f.book_id in (select id from s)) group by book_type`);
cpu('shelved', sql`with s as materialized ${ids} select count(distinct sm.book_id) from book_shelf_mapping sm join shelf sh on sh.id = sm.shelf_id where sm.book_id in (select id from s)`);
{
  const full = listedBooks(store, p).leftJoin('user_book_progress as pr', (j) => j.onRef('pr.book_id', '=', 'book.id').on('pr.user_id', '=', adminId)).select(['book.id', 'book.library_id', 'book.metadata_match_score', 'm.language', 'm.publisher', 'm.series_name', 'm.narrator', 'm.content_rating', 'm.age_rating', 'm.published_date', 'm.page_count', 'm.amazon_rating', 'm.goodreads_rating', 'm.hardcover_rating', 'm.lubimyczytac_rating', 'm.ranobedb_rating', 'm.audible_rating', 'pr.read_status', 'pr.personal_rating',
    sql`(select group_concat(f.book_type || ':' || coalesce(f.file_size_kb, ''), ',') from book_file f where f.book_id = book.id and f.is_book = 1)`.as('files'),
    sql`exists (select 1 from book_shelf_mapping sm join shelf sh on sh.id = sm.shelf_id where sm.book_id = book.id and (sh.user_id = ${adminId} or sh.is_public = 1))`.as('shelved')]).compile();
  const st = store.sqlite.prepare(full.sql).raw();
  for (let r = 0; r < 2; r++) {
    const t = process.cpuUsage(); const w = performance.now();
    const counts = new Map<string, number>();
    let n = 0;
    for (const row of st.iterate(...(full.parameters as unknown[])) as Iterable<unknown[]>) {
      n++;
      for (let i = 3; i < row.length; i++) { const k = `${i}\u0000${row[i]}`; counts.set(k, (counts.get(k) ?? 0) + 1); }
    }
    const u = process.cpuUsage(t);
    console.log('js pass', n, counts.size, 'cpu', ((u.user + u.system) / 1000).toFixed(0), 'wall', (performance.now() - w).toFixed(0));
  }
  const st2 = store.sqlite.prepare(full.sql).raw();
  const t = process.cpuUsage(); const all = st2.all(...(full.parameters as unknown[])); const u = process.cpuUsage(t);
  console.log('raw all', all.length, 'cpu', ((u.user + u.system) / 1000).toFixed(0));
}
await store.close();

// The app's authors: those with at least one book the caller may see (not deleted, with a file), each counted by
// such books; paged, searchable, sortable; and one author's details.
import type { SqlBool } from 'kysely';
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import { visibleBookFilter } from '../auth/visibility.ts';
import type { SqlDialect } from '../store/dialect.ts';
import type { Store } from '../store/store.ts';
import { appNotFound } from './app-error.ts';
import { appPage, type AppPage } from './app-page.ts';
import { libraryCondition } from './book-scope.ts';
import { put, type Json } from './book-summary.ts';
import { remembered, rowsOf } from './sql.ts';
import { containsKeyPattern } from '../text/search-key.ts';

const AUTHOR_BOOK = sql<SqlBool>`(book.deleted = 0 and exists (select 1 from book_file af where af.book_id = book.id))`;

export interface AuthorsQuery {
  sort?: string;
  dir?: string;
  libraryId?: number;
  search?: string;
  hasPhoto?: boolean;
}

const ORDERS: Record<string, (d: SqlDialect) => string> = { name: (d) => d.nocase('a.name'), bookcount: () => 'n', book_count: () => 'n', recent: () => 'a.id', id: () => 'a.id' };

interface AuthorRow {
  id: number;
  name: string;
  asin: string | null;
  n: number;
}

/** Every matching author in the order, remembered while the catalog is unchanged (the app pages through them). */
function matchingAuthors(store: Store, principal: Principal, query: AuthorsQuery): Promise<AuthorRow[]> {
  const direction = sql.raw(query.dir?.toLowerCase() === 'asc' ? 'ASC' : 'DESC');
  let q = store.db
    .selectFrom('author as a')
    .innerJoin('book_metadata_author_mapping as x', 'x.author_id', 'a.id')
    .innerJoin('book', 'book.id', 'x.book_id')
    .select(['a.id', 'a.name', 'a.asin', sql<number>`count(distinct book.id)`.as('n')])
    .where(visibleBookFilter(principal))
    .where(AUTHOR_BOOK);
  if (query.libraryId !== undefined) q = q.where(libraryCondition(principal, query.libraryId));
  if (query.search !== undefined && query.search.trim() !== '') q = q.where(sql<SqlBool>`a.name_key like ${containsKeyPattern(query.search)} escape '\\'`);
  const order = (ORDERS[(query.sort ?? 'name').toLowerCase()] ?? (ORDERS.name as (d: SqlDialect) => string))(store.dialect);
  const compiled = q.groupBy('a.id').orderBy(sql`${sql.raw(order)} ${direction}`).orderBy(sql`a.id ${direction}`).compile();
  return remembered(store, compiled, () => rowsOf<AuthorRow>(store.exec, compiled));
}

/** `withPhoto`: the ids of authors that have a photo (src/core/authors/author-photos.ts). */
export async function appAuthorsPage(store: Store, principal: Principal, query: AuthorsQuery, page: number, size: number, withPhoto: ReadonlySet<number>): Promise<AppPage<Json>> {
  const matching = await matchingAuthors(store, principal, query);
  const all = query.hasPhoto === undefined ? matching : matching.filter((a) => withPhoto.has(a.id) === query.hasPhoto);
  const content = all.slice(page * size, page * size + size).map((a) => put({}, { id: a.id, name: a.name, asin: a.asin, bookCount: a.n, hasPhoto: withPhoto.has(a.id) }));
  return appPage(content, page, size, all.length);
}

/** AppAuthorDetail; 404 for an unknown author and for one none of whose books the caller may see. */
export async function appAuthorDetail(store: Store, principal: Principal, authorId: number, hasPhoto: boolean): Promise<Json> {
  const author = (await store.exec.get('SELECT id, name, description, asin FROM author WHERE id = ?', [authorId])) as
    | { id: number; name: string; description: string | null; asin: string | null }
    | undefined;
  const notFound = appNotFound(`Author not found with ID: ${authorId}`);
  if (!author) throw notFound;
  const compiled = store.db
    .selectFrom('book_metadata_author_mapping as x')
    .innerJoin('book', 'book.id', 'x.book_id')
    .select(sql<number>`count(distinct book.id)`.as('n'))
    .where('x.author_id', '=', authorId)
    .where(visibleBookFilter(principal, { perRow: true }))
    .where(AUTHOR_BOOK)
    .compile();
  const count = Number((await rowsOf<{ n: number }>(store.exec, compiled))[0]?.n ?? 0);
  if (count === 0 && !principal.permissions.admin) throw notFound;
  return put({}, { id: author.id, name: author.name, description: author.description, asin: author.asin, bookCount: count, hasPhoto });
}

// "Similar books" for a book page, computed on request in one SQL statement plus a little arithmetic: no stored
// vectors, nothing to go stale. Candidates are the books sharing an author, a category or a tag with the book (names
// carried by most of the library, such as "Fiction", do not make candidates on their own); each is scored like
// Grimmory's entity similarity:
//   3.0 × Jaccard(authors) + 3.5 × Jaccard(categories) + 1.0 × Jaccard(tags)
//   + 1.5 × cosine(title words) + 0.6 × (1 − |rating difference| / 5)
// (tags are Bindery's addition). As in Grimmory, books of the same series are left out (the book page shows the
// series on its own), as are books scoring nothing, and no author appears on more than three recommendations. Only
// books the caller may see are candidates, so a user with one library still gets a full list.
import type { ExpressionBuilder } from 'kysely';
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import { visibleBookFilter } from '../auth/visibility.ts';
import type { DB } from '../store/db-types.ts';
import { dialectOf } from '../store/dialect.ts';
import type { CatalogReader } from './book-bundles.ts';

export interface Recommendation {
  bookId: number;
  /** Rounded to 5 decimal places, as Grimmory rounds. */
  similarityScore: number;
}

export const WEIGHTS = { authors: 3.0, categories: 3.5, tags: 1.0, title: 1.5, rating: 0.6 } as const;
const MAX_BOOKS_PER_AUTHOR = 3;
/** Rows taken from SQL per recommendation asked for: room for the title/rating re-rank and the author cap. */
const CANDIDATES_PER_RESULT = 10;
const MIN_CANDIDATES = 200;

/** The three kinds of names two books can share: each mapping table and its name column. */
const KINDS = [
  { key: 'authors', mapping: 'book_metadata_author_mapping', column: 'author_id' },
  { key: 'categories', mapping: 'book_metadata_category_mapping', column: 'category_id' },
  { key: 'tags', mapping: 'book_metadata_tag_mapping', column: 'tag_id' },
] as const;

type Kind = (typeof KINDS)[number]['key'];

/**
 * A name on more books than this ("Fiction" on most of a library) finds no candidates by itself: every book would be
 * one, and scoring a whole library costs a fifth of a second at 100,000 books. It still counts in the score of the
 * candidates other names find, and when a book has nothing but such names, a bounded share of their books is scored.
 */
export const COMMON_NAME_BOOKS = 2000;
const COMMON_ONLY_CANDIDATES = 5000;

interface Target {
  seriesName: string | null;
  title: string | null;
  rating: number | null;
  names: Record<Kind, number[]>;
  /** Names carried by at most COMMON_NAME_BOOKS books. */
  selective: Record<Kind, number[]>;
}

interface Candidate {
  id: number;
  structural: number;
  title: string | null;
  rating: number | null;
}

function words(text: string | null): Map<string, number> {
  const counts = new Map<string, number>();
  if (!text) return counts;
  for (const word of text.toLowerCase().replace(/[^\p{L}\p{N}\s]/gu, '').split(/\s+/)) {
    if (word !== '') counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  return counts;
}

function cosine(a: Map<string, number>, b: Map<string, number>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let dot = 0;
  for (const [word, n] of a) dot += n * (b.get(word) ?? 0);
  const norm = (v: Map<string, number>): number => Math.sqrt([...v.values()].reduce((sum, n) => sum + n * n, 0));
  return dot / (norm(a) * norm(b));
}

function ratingSimilarity(a: number | null, b: number | null): number {
  if (a === null || b === null) return 0;
  return 1 - Math.min(Math.abs(a - b) / 5, 1);
}

async function loadTarget(reader: CatalogReader, bookId: number): Promise<Target | undefined> {
  const book = (await reader.exec.get('select m.series_name as "seriesName", m.title, m.rating from book b left join book_metadata m on m.book_id = b.id where b.id = ?', [bookId])) as
    | Omit<Target, 'names' | 'selective'>
    | undefined;
  if (!book) return undefined;
  const names = {} as Record<Kind, number[]>;
  const selective = {} as Record<Kind, number[]>;
  for (const { key, mapping, column } of KINDS) {
    // How many books carry each name, counted only up to just past the threshold.
    const rows = (await reader.exec.all(
      `select t.${column} as id, (select count(*) from (select 1 from ${mapping} x where x.${column} = t.${column} limit ${COMMON_NAME_BOOKS + 1}) as carriers) as books from ${mapping} t where t.book_id = ?`,
      [bookId],
    )) as { id: number; books: number }[];
    names[key] = rows.map((r) => r.id);
    selective[key] = rows.filter((r) => r.books <= COMMON_NAME_BOOKS).map((r) => r.id);
  }
  return { ...book, names, selective };
}

const idList = (ids: readonly number[]) => (ids.length > 0 ? sql.join(ids) : sql`null`);

/** Books sharing a name of the lists given with the target (not the target itself), each once. */
function sharingBooks(bookId: number, lists: Record<Kind, number[]>, cap: number | undefined) {
  const parts = KINDS.filter(({ key }) => lists[key].length > 0).map(({ key, mapping, column }) => sql`select book_id from ${sql.table(mapping)} where ${sql.ref(column)} in (${idList(lists[key])})`);
  if (parts.length === 0) return undefined;
  return sql`(select distinct book_id from (${sql.join(parts, sql` union all `)}) as sharing where book_id != ${bookId}${cap === undefined ? sql`` : sql` limit ${cap}`})`;
}

/** The Jaccard part of a score: of the candidate's names of one kind, how many the target shares, against the union. */
function jaccard(kind: (typeof KINDS)[number], target: Target) {
  const mine = target.names[kind.key];
  if (mine.length === 0) return sql`0.0`;
  const table = sql.table(kind.mapping);
  const shared = sql`(select count(*) from ${table} x where x.book_id = cand.book_id and ${sql.ref(`x.${kind.column}`)} in (${idList(mine)}))`;
  const own = sql`(select count(*) from ${table} x where x.book_id = cand.book_id)`;
  // `1.0 *` first: SQLite divides integers as integers.
  return sql`(1.0 * ${WEIGHTS[kind.key]} * ${shared} / (${mine.length} + ${own} - ${shared}))`;
}

/** The best `limit` candidates by the authors/categories/tags part of the score, visible to the principal. */
async function structuralCandidates(reader: CatalogReader, principal: Principal, bookId: number, target: Target, limit: number): Promise<Candidate[]> {
  const candidates = sharingBooks(bookId, target.selective, undefined) ?? sharingBooks(bookId, target.names, COMMON_ONLY_CANDIDATES);
  if (!candidates) return [];
  const score = sql<number>`${sql.join(KINDS.map((kind) => jaccard(kind, target)), sql` + `)}`;
  let query = reader.db
    .selectFrom('book')
    .innerJoin(candidates.as('cand'), (join) => join.on(sql`cand.book_id`, '=', sql`book.id`))
    .leftJoin('book_metadata as m', 'm.book_id', 'book.id')
    .select([sql<number>`book.id`.as('id'), score.as('structural'), 'm.title', 'm.rating'])
    .where('book.deleted', '=', 0)
    // Driven by the candidates, not by the caller's libraries: `+library_id` keeps SQLite off the library index.
    .where((eb) => visibleBookFilter(principal, { libraryIndex: false })(eb as unknown as ExpressionBuilder<DB, 'book'>))
    .orderBy(sql`structural`, 'desc')
    .orderBy('book.id')
    .limit(limit);
  if (target.seriesName !== null && target.seriesName.trim() !== '') {
    const { nocase } = dialectOf(reader.db);
    const [before, after] = nocase('\u0000').split('\u0000') as [string, string];
    query = query.where(sql<boolean>`${sql.raw(nocase("coalesce(m.series_name, '')"))} != ${sql.raw(before)}CAST(${target.seriesName} AS text)${sql.raw(after)}`);
  }
  const { sql: text, parameters } = query.compile();
  return (await reader.exec.all(text, parameters as number[])) as unknown as Candidate[];
}

async function authorNamesOf(reader: CatalogReader, ids: number[]): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  if (ids.length === 0) return out;
  const rows = (await reader.exec.all(
    `select m.book_id as id, lower(a.name) as name from book_metadata_author_mapping m join author a on a.id = m.author_id where m.book_id in (${dialectOf(reader.db).jsonValues('integer')})`,
    [JSON.stringify(ids)],
  )) as { id: number; name: string }[];
  for (const row of rows) out.set(row.id, [...(out.get(row.id) ?? []), row.name]);
  return out;
}

/** Up to `limit` books like `bookId`, best first; empty when the book is unknown or nothing is similar. */
export async function recommendBooks(reader: CatalogReader, principal: Principal, bookId: number, limit: number): Promise<Recommendation[]> {
  const target = await loadTarget(reader, bookId);
  if (!target) return [];
  const candidates = await structuralCandidates(reader, principal, bookId, target, Math.max(limit * CANDIDATES_PER_RESULT, MIN_CANDIDATES));
  const titleWords = words(target.title);
  const scored = candidates
    .map((c) => ({
      id: c.id,
      score: c.structural + WEIGHTS.title * cosine(titleWords, words(c.title)) + WEIGHTS.rating * ratingSimilarity(target.rating, c.rating),
    }))
    .filter((c) => c.score > 0)
    .sort((a, b) => b.score - a.score || a.id - b.id);
  const authors = await authorNamesOf(reader, scored.map((c) => c.id));
  const perAuthor = new Map<string, number>();
  const out: Recommendation[] = [];
  for (const candidate of scored) {
    if (out.length >= limit) break;
    const names = [...new Set(authors.get(candidate.id) ?? [])];
    if (names.some((name) => (perAuthor.get(name) ?? 0) >= MAX_BOOKS_PER_AUTHOR)) continue;
    for (const name of names) perAuthor.set(name, (perAuthor.get(name) ?? 0) + 1);
    out.push({ bookId: candidate.id, similarityScore: Math.round(candidate.score * 1e5) / 1e5 });
  }
  return out;
}

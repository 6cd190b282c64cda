// Komga's series search conditions over Bindery's series (the books of a library sharing a series name). A series
// meets a condition on its books' values (tags, genres, authors, release dates, …) when one of its visible books does;
// each such leaf is one set-based statement naming the series that qualify (remembered until the catalog changes),
// and the tree combines those sets over the reader's series list. Nothing is read per series.
import type { RawBuilder, SqlBool } from 'kysely';
import { sql } from 'kysely';
import { authorCondition, daysAgo, libraryNumber, numericCondition, RELEASE_DATE, tagCondition, type SearchScope } from './book-search.ts';
import { findCollection, type Collection } from './collections.ts';
import { hasGenre, hasTag } from './filters.ts';
import type { KomgaReadState } from './read-progress.ts';
import type { Condition, DateOp, EqualityNullable, Search, SeriesLeaf } from './search-condition.ts';
import { seriesIndex, seriesKeysWhere, seriesReadCounts, type SeriesHead } from './series.ts';
import { textMatches } from './text-match.ts';

type Cond = RawBuilder<SqlBool>;
type Test = (head: SeriesHead) => boolean;

const ALL: Test = () => true;
const NONE: Test = () => false;

/** Series that a reader can open with a visible book in one of the collections. */
export async function inCollections(scope: SearchScope, collections: (Collection | undefined)[]): Promise<Set<string>> {
  const keys = new Set<string>();
  for (const c of collections) if (c) for (const key of (await seriesKeysWhere(scope.store, scope.principal, scope.groupUnknown, c.books as Cond)).keys()) keys.add(key);
  return keys;
}

/** The read state of a whole series: read when every book is, unread when none is read or begun. */
export function seriesState(count: number, counts: { read: number; inProgress: number } | undefined): KomgaReadState {
  if (!counts || counts.read + counts.inProgress === 0) return 'UNREAD';
  return counts.read >= count ? 'READ' : 'IN_PROGRESS';
}

/** Series with a visible book meeting the condition. */
async function someBook(scope: SearchScope, condition: Cond): Promise<Test> {
  const keys = await seriesKeysWhere(scope.store, scope.principal, scope.groupUnknown, condition);
  return (head) => keys.has(head.key);
}

const negate = (test: Test): Test => (head) => !test(head);
const both = (a: Test, b: Test): Test => (head) => a(head) && b(head);

/** `is` / `isNot` / `isNull` / `isNotNull` on a value a series has when some book has it. */
async function nullableOnBooks(scope: SearchScope, op: EqualityNullable<string>, matching: (value: string) => Cond, any: Cond): Promise<Test> {
  if (!('value' in op)) return op.operator === 'isNull' ? negate(await someBook(scope, any)) : someBook(scope, any);
  const test = await someBook(scope, matching(op.value));
  return op.operator === 'is' ? test : negate(test);
}

/** A series' release date is its earliest book's: "before" asks for one book before, "after" for none at or before. */
async function releaseTest(scope: SearchScope, op: DateOp): Promise<Test> {
  const dated = () => someBook(scope, sql<SqlBool>`${RELEASE_DATE} IS NOT NULL`);
  const earlierThan = (day: string): Promise<Test> => someBook(scope, sql<SqlBool>`${RELEASE_DATE} < ${day}`);
  switch (op.operator) {
    case 'before':
      return earlierThan(op.date);
    case 'after':
      return both(await dated(), negate(await someBook(scope, sql<SqlBool>`${RELEASE_DATE} <= ${op.date}`)));
    case 'isInTheLast':
      return both(await dated(), negate(await earlierThan(daysAgo(op.durationMs))));
    case 'isNotInTheLast':
      return earlierThan(daysAgo(op.durationMs));
    case 'isNull':
      return negate(await dated());
    default:
      return dated();
  }
}

const lowerEquals = (expression: RawBuilder<unknown>, value: string): Cond => sql<SqlBool>`lower(${expression}) = ${value.toLowerCase()}`;

async function leafTest(scope: SearchScope, leaf: SeriesLeaf): Promise<Test> {
  const { store, principal, groupUnknown } = scope;
  const byOperator = (operator: string, test: Test): Test => (operator === 'isNot' ? negate(test) : test);
  switch (leaf.field) {
    case 'libraryId': {
      const id = libraryNumber(leaf.op.value);
      return byOperator(leaf.op.operator, (head) => head.libraryId === id);
    }
    case 'collectionId': {
      const keys = await inCollections(scope, [await findCollection(store, principal, leaf.op.value)]);
      return byOperator(leaf.op.operator, (head) => keys.has(head.key));
    }
    case 'deleted':
      return leaf.op.operator === 'isTrue' ? NONE : ALL;
    case 'complete':
      // Every Bindery series is complete: its book count is its total.
      return leaf.op.operator === 'isTrue' ? ALL : NONE;
    case 'oneShot':
      return leaf.op.operator === 'isTrue' ? (head) => head.count === 1 : (head) => head.count !== 1;
    case 'title':
    case 'titleSort': {
      const { operator, value } = leaf.op;
      return (head) => textMatches(head.name, operator, value);
    }
    case 'releaseDate':
      return releaseTest(scope, leaf.op);
    case 'tag':
      return nullableOnBooks(scope, leaf.op, (value) => hasTag([value]), tagCondition({ operator: 'isNotNull' }));
    case 'genre':
      return nullableOnBooks(scope, leaf.op, (value) => hasGenre([value]), sql<SqlBool>`book.id IN (SELECT x.book_id FROM book_metadata_category_mapping x)`);
    case 'sharingLabel':
      // Bindery's series carry no sharing labels.
      return leaf.op.operator === 'isNot' || leaf.op.operator === 'isNull' ? ALL : NONE;
    case 'publisher':
      return byOperator(leaf.op.operator, await someBook(scope, lowerEquals(sql`m.publisher`, leaf.op.value)));
    case 'language':
      return byOperator(leaf.op.operator, await someBook(scope, lowerEquals(sql`coalesce(m.language, 'en')`, leaf.op.value)));
    case 'ageRating': {
      const op = leaf.op;
      if (op.operator === 'isNull') return negate(await someBook(scope, sql<SqlBool>`m.age_rating IS NOT NULL`));
      if (op.operator === 'isNot') return negate(await someBook(scope, numericCondition(sql`m.age_rating`, { operator: 'is', value: op.value })));
      return someBook(scope, numericCondition(sql`m.age_rating`, op));
    }
    case 'readStatus': {
      const counts = await seriesReadCounts(store, principal, groupUnknown, principal.userId);
      const { operator, value } = leaf.op;
      return byOperator(operator, (head) => seriesState(head.count, counts.get(head.key)) === value);
    }
    case 'seriesStatus':
      // Bindery knows no series status; every series is ONGOING.
      return byOperator(leaf.op.operator, () => leaf.op.value === 'ONGOING');
    case 'author':
      return byOperator(leaf.op.operator, await someBook(scope, authorCondition({ operator: 'is', value: leaf.op.value })));
  }
}

async function eachTest(scope: SearchScope, conditions: readonly Condition<SeriesLeaf>[]): Promise<Test[]> {
  const tests: Test[] = [];
  for (const c of conditions) tests.push(await seriesTest(scope, c));
  return tests;
}

export async function seriesTest(scope: SearchScope, condition: Condition<SeriesLeaf>): Promise<Test> {
  if ('allOf' in condition) {
    const tests = await eachTest(scope, condition.allOf);
    return (head) => tests.every((t) => t(head));
  }
  if ('anyOf' in condition) {
    if (condition.anyOf.length === 0) return ALL;
    const tests = await eachTest(scope, condition.anyOf);
    return (head) => tests.some((t) => t(head));
  }
  return leafTest(scope, condition);
}

/** The reader's series (by name) that meet a search body: its tree, and its full-text search over the names. */
export async function searchSeries(scope: SearchScope, search: Search<SeriesLeaf>): Promise<SeriesHead[]> {
  let heads = (await seriesIndex(scope.store, scope.principal, scope.groupUnknown)).heads;
  if (search.condition !== undefined) heads = heads.filter(await seriesTest(scope, search.condition));
  const text = search.fullTextSearch;
  if (text !== undefined) heads = heads.filter((head) => textMatches(head.name, 'contains', text));
  return heads;
}

// Komga collections: the reader's own and public shelves (id `<shelfId>`), and the magic shelves they may open (id
// `magic-<id>`: own and public ones, for an administrator or an owner with canAccessOpds, as the OPDS feeds allow),
// each with the series of its visible books. Grimmory exposes only magic shelves, without `seriesIds`.
import type { Expression, RawBuilder, SqlBool } from 'kysely';
import { sql } from 'kysely';
import { hasAny, isAdmin, type Principal } from '../auth/principal.ts';
import { compileMagicShelf } from '../opds/magic-shelf-rules.ts';
import type { SqlDialect } from '../store/dialect.ts';
import type { Store } from '../store/store.ts';
import type { CollectionRow } from './dto.ts';
import { seriesId, seriesKeysWhere } from './series.ts';
import { column, compareNocase, listedBooks, NOTHING, remembered } from './sql.ts';

type Cond = RawBuilder<SqlBool> | Expression<SqlBool>;

export interface Collection {
  id: string;
  name: string;
  created: string;
  modified: string;
  /** Which books are in it (over `book` and `m`). */
  books: Cond;
  /** For a shelf: its id (the hidden-books check needs it). */
  shelfId?: number;
}

interface ShelfSqlRow {
  id: number;
  name: string;
}

interface MagicSqlRow {
  id: number;
  name: string;
  filter_json: string;
  created_at: string | null;
  updated_at: string | null;
}

const EPOCH = new Date(0).toISOString();

function shelfCollection(row: ShelfSqlRow): Collection {
  return { id: String(row.id), name: row.name, created: EPOCH, modified: EPOCH, books: sql<SqlBool>`book.id IN (SELECT s.book_id FROM book_shelf_mapping s WHERE s.shelf_id = ${row.id})`, shelfId: row.id };
}

function magicCollection(d: SqlDialect, row: MagicSqlRow, userId: number): Collection {
  // Rules that cannot be read select nothing rather than everything.
  const rules = compileMagicShelf(d, row.filter_json, userId);
  return { id: `magic-${row.id}`, name: row.name, created: row.created_at ?? EPOCH, modified: row.updated_at ?? row.created_at ?? EPOCH, books: rules ?? NOTHING };
}

const mayOpenMagicShelves = (principal: Principal): boolean => hasAny(principal, ['admin', 'canAccessOpds']);

/** Every collection the principal may open, by name. */
export async function visibleCollections(store: Store, principal: Principal): Promise<Collection[]> {
  const shelves = ((await store.exec.all('SELECT id, name FROM shelf WHERE user_id = ? OR is_public = 1', [principal.userId])) as unknown as ShelfSqlRow[]).map(shelfCollection);
  const magic = mayOpenMagicShelves(principal)
    ? ((await store.exec.all('SELECT id, name, filter_json, created_at, updated_at FROM magic_shelf WHERE user_id = ? OR is_public = 1', [principal.userId])) as unknown as MagicSqlRow[]).map((r) =>
        magicCollection(store.dialect, r, principal.userId),
      )
    : [];
  return [...shelves, ...magic].sort((a, b) => compareNocase(a.name, b.name) || (a.id < b.id ? -1 : 1));
}

/** The collection with this id, if the principal may open it. */
export async function findCollection(store: Store, principal: Principal, id: string): Promise<Collection | undefined> {
  const shelf = /^\d{1,15}$/.exec(id);
  if (shelf) {
    const row = (await store.exec.get('SELECT id, name, user_id, is_public FROM shelf WHERE id = ?', [Number(id)])) as (ShelfSqlRow & { user_id: number; is_public: number }) | undefined;
    return row && (row.user_id === principal.userId || row.is_public === 1) ? shelfCollection(row) : undefined;
  }
  const magic = /^magic-(\d{1,15})$/.exec(id);
  if (!magic || !mayOpenMagicShelves(principal)) return undefined;
  const row = (await store.exec.get('SELECT id, name, filter_json, created_at, updated_at, user_id, is_public FROM magic_shelf WHERE id = ?', [Number(magic[1])])) as
    | (MagicSqlRow & { user_id: number; is_public: number })
    | undefined;
  return row && (row.user_id === principal.userId || row.is_public === 1 || isAdmin(principal)) ? magicCollection(store.dialect, row, principal.userId) : undefined;
}

/** The collection as CollectionDto describes it: the ids of the series of its visible books, by name. */
export async function collectionRow(store: Store, principal: Principal, collection: Collection, groupUnknown: boolean): Promise<CollectionRow> {
  const series = [...(await seriesKeysWhere(store, principal, groupUnknown, collection.books as RawBuilder<SqlBool>)).values()].sort(
    (a, b) => compareNocase(a.name, b.name) || a.libraryId - b.libraryId,
  );
  let filtered = false;
  if (collection.shelfId !== undefined) {
    const onShelf = { sql: 'SELECT count(*) FROM book_shelf_mapping s JOIN book b ON b.id = s.book_id WHERE s.shelf_id = ? AND b.deleted = 0', parameters: [collection.shelfId] };
    const visible = listedBooks(store, principal, { metadata: false }).where(collection.books).select(sql<number>`count(*)`.as('n')).compile();
    const count = (compiled: { sql: string; parameters: readonly unknown[] }): Promise<number> => remembered(store, compiled, async () => (await column<number>(store, compiled))[0] ?? 0);
    filtered = (await count(visible)) < (await count(onShelf));
  }
  return {
    id: collection.id,
    name: collection.name,
    seriesIds: [...new Set(series.map((s) => seriesId(s.libraryId, s.name)))],
    created: collection.created,
    modified: collection.modified,
    filtered,
  };
}

/** The collection's cover: the first of its visible books by id (undefined when it shows none). */
/** The rows of every collection the reader may open (those `include` keeps), by name. */
export async function collectionRows(reader: { store: Store; principal: Principal; groupUnknown: boolean }, include: (c: Collection) => boolean = () => true): Promise<CollectionRow[]> {
  const rows: CollectionRow[] = [];
  for (const c of await visibleCollections(reader.store, reader.principal)) if (include(c)) rows.push(await collectionRow(reader.store, reader.principal, c, reader.groupUnknown));
  return rows;
}

/** The collection's cover: the first of its visible books by id (undefined when it shows none). */
export async function collectionCoverBook(store: Store, principal: Principal, collection: Collection): Promise<number | undefined> {
  return (await column<number>(store, listedBooks(store, principal, { metadata: false }).where(collection.books).select('book.id').orderBy('book.id').limit(1).compile()))[0];
}

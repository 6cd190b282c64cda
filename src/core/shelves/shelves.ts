// Shelves: named, per-user collections of books; an admin may make one public so every user sees it.
import { CodedError } from '../coded-error.ts';
import { sql } from 'kysely';
import { isAdmin, type Principal } from '../auth/principal.ts';
import { visibleBookFilter } from '../auth/visibility.ts';
import type { Db } from '../store/store.ts';
import { storedSortJson } from '../stored-sort.ts';

export interface ShelfRow {
  id: number;
  user_id: number;
  name: string;
  sort: string | null;
  icon: string | null;
  icon_type: string | null;
  is_public: number;
}

export type ShelfErrorCode = 'NOT_FOUND' | 'CONFLICT' | 'FORBIDDEN' | 'DATA_CONFLICT' | 'UNAUTHORIZED';

export class ShelfError extends CodedError<ShelfErrorCode> {}

export interface ShelfInput {
  name: string;
  icon?: string | null;
  iconType?: string | null;
  publicShelf?: boolean;
}

/** Grimmory's `Shelf` JSON (nulls left out). */
export function shelfJson(row: ShelfRow, bookCount: number): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: row.id,
    name: row.name,
    icon: row.icon,
    iconType: row.icon_type,
    sort: storedSortJson(row.sort),
    userId: row.user_id,
    publicShelf: row.is_public === 1,
    bookCount,
  };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== null && v !== undefined));
}

const SHELF_COLUMNS = ['id', 'user_id', 'name', 'sort', 'icon', 'icon_type', 'is_public'] as const;

/** How many books of each shelf the principal may see (a shelf can hold books from libraries they lack). */
export async function visibleBookCounts(db: Db, principal: Principal, shelfIds: readonly number[]): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  if (shelfIds.length === 0) return counts;
  const rows = await db
    .selectFrom('book_shelf_mapping as m')
    .innerJoin('book', 'book.id', 'm.book_id')
    .select(['m.shelf_id', sql<number>`count(*)`.as('n')])
    .where('m.shelf_id', 'in', [...shelfIds])
    .where(visibleBookFilter(principal))
    .groupBy('m.shelf_id')
    .execute();
  for (const r of rows) counts.set(r.shelf_id, Number(r.n));
  return counts;
}

async function withCounts(db: Db, principal: Principal, rows: ShelfRow[]): Promise<Record<string, unknown>[]> {
  const counts = await visibleBookCounts(db, principal, rows.map((r) => r.id));
  return rows.map((r) => shelfJson(r, counts.get(r.id) ?? 0));
}

export async function findShelf(db: Db, shelfId: number): Promise<ShelfRow | undefined> {
  return db.selectFrom('shelf').select(SHELF_COLUMNS).where('id', '=', shelfId).executeTakeFirst();
}

/** The caller's own shelves and every public shelf. */
export async function listShelves(db: Db, principal: Principal): Promise<Record<string, unknown>[]> {
  const rows = await db
    .selectFrom('shelf')
    .select(SHELF_COLUMNS)
    .where((eb) => eb.or([eb('user_id', '=', principal.userId), eb('is_public', '=', 1)]))
    .orderBy('id')
    .execute();
  return withCounts(db, principal, rows);
}

/** Grimmory's `canReadShelf`: the owner or anyone for a public shelf. A missing shelf is simply not readable. */
export function canReadShelf(principal: Principal, shelf: ShelfRow | undefined): shelf is ShelfRow {
  return shelf !== undefined && (shelf.is_public === 1 || shelf.user_id === principal.userId);
}

export function ownsShelf(principal: Principal, shelf: ShelfRow | undefined): shelf is ShelfRow {
  return shelf !== undefined && shelf.user_id === principal.userId;
}

export async function shelfView(db: Db, principal: Principal, shelf: ShelfRow): Promise<Record<string, unknown>> {
  return (await withCounts(db, principal, [shelf]))[0] as Record<string, unknown>;
}

/** Names are unique per user regardless of letter case (as under Grimmory's database collation). */
async function nameTaken(db: Db, userId: number, name: string, exceptShelfId?: number): Promise<boolean> {
  let q = db.selectFrom('shelf').select('id').where('user_id', '=', userId).where(sql<boolean>`lower(name) = lower(${name})`);
  if (exceptShelfId !== undefined) q = q.where('id', '!=', exceptShelfId);
  return (await q.executeTakeFirst()) !== undefined;
}

export async function createShelf(db: Db, principal: Principal, input: ShelfInput): Promise<Record<string, unknown>> {
  if (await nameTaken(db, principal.userId, input.name)) throw new ShelfError('CONFLICT', `Shelf already exists: ${input.name}`);
  if (input.publicShelf && !isAdmin(principal)) throw new ShelfError('FORBIDDEN', 'Access denied.');
  const row = await db
    .insertInto('shelf')
    .values({ user_id: principal.userId, name: input.name, icon: input.icon ?? null, icon_type: input.iconType ?? null, is_public: input.publicShelf ? 1 : 0 })
    .returning(SHELF_COLUMNS)
    .executeTakeFirstOrThrow();
  return shelfView(db, principal, row);
}

/** Replaces name, icon and visibility of the caller's own shelf. */
export async function updateShelf(db: Db, principal: Principal, shelf: ShelfRow, input: ShelfInput): Promise<Record<string, unknown>> {
  if (input.publicShelf && !isAdmin(principal)) throw new ShelfError('FORBIDDEN', 'Access denied.');
  if (await nameTaken(db, shelf.user_id, input.name, shelf.id)) throw new ShelfError('DATA_CONFLICT', 'A data conflict occurred. The operation could not be completed.');
  await db
    .updateTable('shelf')
    .set({ name: input.name, icon: input.icon ?? null, icon_type: input.iconType ?? null, is_public: input.publicShelf ? 1 : 0 })
    .where('id', '=', shelf.id)
    .execute();
  return shelfView(db, principal, (await findShelf(db, shelf.id)) as ShelfRow);
}

export async function deleteShelf(db: Db, shelfId: number): Promise<void> {
  await db.deleteFrom('shelf').where('id', '=', shelfId).execute();
}

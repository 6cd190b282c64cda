// The app's shelf lists: the caller's own and public shelves (AppShelfSummary, counted by the books the caller may
// see) and magic shelves (AppMagicShelfSummary).
import type { Principal } from '../auth/principal.ts';
import { visibleBookCounts } from '../shelves/shelves.ts';
import type { Db } from '../store/store.ts';
import { put, type Json } from './book-summary.ts';

export async function appShelves(db: Db, principal: Principal): Promise<Json[]> {
  const rows = await db
    .selectFrom('shelf')
    .select(['id', 'name', 'icon', 'is_public'])
    .where((eb) => eb.or([eb('user_id', '=', principal.userId), eb('is_public', '=', 1)]))
    .orderBy('id')
    .execute();
  const counts = await visibleBookCounts(db, principal, rows.map((r) => r.id));
  return rows.map((r) => put({}, { id: r.id, name: r.name, icon: r.icon, bookCount: counts.get(r.id) ?? 0, publicShelf: r.is_public === 1 }));
}

/** The caller's own magic shelves, then other users' public ones. */
export async function appMagicShelves(db: Db, principal: Principal): Promise<Json[]> {
  const columns = ['id', 'name', 'icon', 'icon_type', 'is_public'] as const;
  const own = await db.selectFrom('magic_shelf').select(columns).where('user_id', '=', principal.userId).orderBy('id').execute();
  const shared = await db.selectFrom('magic_shelf').select(columns).where('is_public', '=', 1).where('user_id', '!=', principal.userId).orderBy('id').execute();
  return [...own, ...shared].map((r) => put({}, { id: r.id, name: r.name, icon: r.icon, iconType: r.icon_type, publicShelf: r.is_public === 1 }));
}

// Magic shelves: saved rule sets the web UI evaluates client-side. Listing only; editing comes with the rule engine.
import type { Db } from '../store/store.ts';

/** Grimmory's `MagicShelf` JSON (every property present). */
function magicShelfJson(row: { id: number; name: string; icon: string | null; icon_type: string | null; filter_json: string; is_public: number }): Record<string, unknown> {
  return { id: row.id, name: row.name, icon: row.icon, iconType: row.icon_type, filterJson: row.filter_json, isPublic: row.is_public === 1 };
}

/** The user's own magic shelves, then other users' public ones. */
export async function listMagicShelves(db: Db, userId: number): Promise<Record<string, unknown>[]> {
  const columns = ['id', 'name', 'icon', 'icon_type', 'filter_json', 'is_public'] as const;
  const own = await db.selectFrom('magic_shelf').select(columns).where('user_id', '=', userId).orderBy('id').execute();
  const shared = await db.selectFrom('magic_shelf').select(columns).where('is_public', '=', 1).where('user_id', '!=', userId).orderBy('id').execute();
  return [...own, ...shared].map(magicShelfJson);
}

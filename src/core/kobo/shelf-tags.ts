// The user's shelves and magic shelves as device collections (tags), limited to the books the device holds.
import { hasAny, type Principal } from '../auth/principal.ts';
import { pageOfBooks } from '../opds/catalog.ts';
import { compileMagicShelf } from '../opds/magic-shelf-rules.ts';
import type { Db, Store } from '../store/store.ts';
import { tagEntry, type Json, type TagInput } from './entitlements.ts';
import { KOBO_SHELF_NAME } from './kobo-shelf.ts';

/** Grimmory sends at most this many books of a magic shelf. */
const MAGIC_SHELF_LIMIT = 250;

const utc = (value: string | null): string | null => {
  if (!value) return null;
  const time = Date.parse(value);
  return Number.isNaN(time) ? null : new Date(time).toISOString();
};

/**
 * One tag per shelf of the user's own (the Kobo shelf itself excepted) and per magic shelf of theirs, holding the
 * books of the snapshot. Magic shelves need OPDS access (or admin), as evaluating them does everywhere; without it they
 * are left out silently.
 */
export async function shelfTags(trx: Db, store: Store, principal: Principal, snapshotId: string): Promise<Json[]> {
  const shelves = await trx.selectFrom('shelf').select(['id', 'name']).where('user_id', '=', principal.userId).where('name', '!=', KOBO_SHELF_NAME).orderBy('id').execute();
  const members = shelves.length === 0 ? [] : await trx
    .selectFrom('book_shelf_mapping as m')
    .innerJoin('kobo_library_snapshot_book as s', (join) => join.onRef('s.book_id', '=', 'm.book_id').on('s.snapshot_id', '=', snapshotId))
    .select(['m.shelf_id', 'm.book_id'])
    .where('m.shelf_id', 'in', shelves.map((s) => s.id))
    .orderBy('m.shelf_id')
    .orderBy('m.book_id')
    .execute();
  const byShelf = new Map<number, number[]>();
  for (const m of members) byShelf.set(m.shelf_id, [...(byShelf.get(m.shelf_id) ?? []), m.book_id]);
  const tags: TagInput[] = shelves.map((s) => ({ id: `BL-S-${s.id}`, name: s.name, bookIds: byShelf.get(s.id) ?? [] }));

  if (hasAny(principal, ['admin', 'canAccessOpds'])) {
    const magic = await trx.selectFrom('magic_shelf').select(['id', 'name', 'filter_json', 'created_at', 'updated_at']).where('user_id', '=', principal.userId).orderBy('id').execute();
    if (magic.length > 0) {
      const onDevice = new Set((await trx.selectFrom('kobo_library_snapshot_book').select('book_id').where('snapshot_id', '=', snapshotId).execute()).map((r) => r.book_id));
      for (const shelf of magic) {
        const rules = compileMagicShelf(store.dialect, shelf.filter_json, principal.userId);
        if (!rules) continue;
        const { ids } = await pageOfBooks(store, principal, { rules }, 'RECENT', 1, MAGIC_SHELF_LIMIT);
        tags.push({ id: `BL-MS-${shelf.id}`, name: shelf.name, created: utc(shelf.created_at), lastModified: utc(shelf.updated_at), bookIds: ids.filter((id) => onDevice.has(id)).sort((a, b) => a - b) });
      }
    }
  }
  return tags.map(tagEntry);
}

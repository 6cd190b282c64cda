// With `writeOnScan` on, every book a scan adds gets its sidecar, as Grimmory writes one for each new book.
import type { Store } from '../store/store.ts';
import { exportBookSidecar, locateSidecar } from './book-sidecar.ts';
import { SidecarError } from './errors.ts';
import { sidecarSettings } from './settings.ts';

/**
 * Writes sidecars for the books of the library added at or after `since` (the scan's start). Returns a warning per
 * book whose sidecar could not be written; the scan's own results stand either way.
 */
export async function writeSidecarsForNewBooks(store: Pick<Store, 'db'>, libraryId: number, since: string, coversRoot: string): Promise<{ path: string; reason: string }[]> {
  const settings = await sidecarSettings(store.db);
  if (!settings.enabled || !settings.writeOnScan) return [];
  const warnings: { path: string; reason: string }[] = [];
  let after = 0;
  for (;;) {
    const rows = await store.db.selectFrom('book').select('id').where('library_id', '=', libraryId).where('added_on', '>=', since).where('deleted', '=', 0).where('id', '>', after).orderBy('id').limit(200).execute();
    for (const { id } of rows) {
      try {
        await exportBookSidecar(store, coversRoot, id, { force: true, includeCover: settings.includeCoverFile });
      } catch (error) {
        if (error instanceof SidecarError && error.code === 'NO_BOOK_FILE') continue;
        const path = (await locateSidecar(store.db, id).catch(() => undefined))?.sidecarPath ?? `book ${id}`;
        warnings.push({ path, reason: `sidecar not written: ${error instanceof Error ? error.message : String(error)}` });
      }
    }
    const last = rows.at(-1);
    if (!last || rows.length < 200) return warnings;
    after = last.id;
  }
}

// Each user's Kobo sync settings (Grimmory's KoboSyncSettings): the device token, the switch, the read-status
// thresholds, auto-add and two-way progress.
import { maskApiKey } from '../hardcover/sync-settings.ts';
import { randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import { CodedError } from '../coded-error.ts';
import type { KoboUserSettingsTable } from '../store/db-types.ts';
import type { Db } from '../store/store.ts';
import { deleteKoboShelf, ensureKoboShelf } from './kobo-shelf.ts';

export type KoboSettingsRow = Selectable<KoboUserSettingsTable>;

export class KoboSettingsError extends CodedError<'INVALID'> {}

/** The settings as the web UI reads them. */
export interface KoboSyncSettingsJson {
  id: number;
  userId: string;
  token: string;
  syncEnabled: boolean;
  progressMarkAsReadingThreshold: number | null;
  progressMarkAsFinishedThreshold: number | null;
  autoAddToShelf: boolean;
  hardcoverApiKey: string | null;
  hardcoverSyncEnabled: boolean;
  twoWayProgressSync: boolean;
}

export const DEFAULT_READING_THRESHOLD = 1;
export const DEFAULT_FINISHED_THRESHOLD = 99;

export function settingsJson(row: KoboSettingsRow): KoboSyncSettingsJson {
  return {
    id: row.id,
    userId: String(row.user_id),
    token: row.token,
    syncEnabled: row.sync_enabled === 1,
    progressMarkAsReadingThreshold: row.progress_mark_as_reading_threshold,
    progressMarkAsFinishedThreshold: row.progress_mark_as_finished_threshold,
    autoAddToShelf: row.auto_add_to_shelf === 1,
    // A catalog carried over from Grimmory may hold a key here: it only ever leaves masked.
    hardcoverApiKey: maskApiKey(row.hardcover_api_key),
    hardcoverSyncEnabled: row.hardcover_sync_enabled === 1,
    twoWayProgressSync: row.two_way_progress_sync === 1,
  };
}

export async function findKoboSettings(db: Db, userId: number): Promise<KoboSettingsRow | undefined> {
  return db.selectFrom('kobo_user_settings').selectAll().where('user_id', '=', userId).executeTakeFirst();
}

/** A device token: a random UUID, as Grimmory makes them. */
export function newDeviceToken(): string {
  return randomUUID();
}

/** The user's settings; the first read creates them (sync off, a fresh token) and the user's Kobo shelf. */
export async function koboSettingsFor(db: Db, userId: number): Promise<KoboSettingsRow> {
  const existing = await findKoboSettings(db, userId);
  if (existing) return existing;
  return db.transaction().execute(async (trx) => {
    await ensureKoboShelf(trx, userId);
    await trx.insertInto('kobo_user_settings').values({ user_id: userId, token: newDeviceToken(), sync_enabled: 0 }).onConflict((oc) => oc.column('user_id').doNothing()).execute();
    return trx.selectFrom('kobo_user_settings').selectAll().where('user_id', '=', userId).executeTakeFirstOrThrow();
  });
}

/** A new token: devices set up with the old one stop syncing. */
export async function renewDeviceToken(db: Db, userId: number): Promise<KoboSettingsRow> {
  return db.transaction().execute(async (trx) => {
    const token = newDeviceToken();
    await ensureKoboShelf(trx, userId);
    await trx
      .insertInto('kobo_user_settings')
      .values({ user_id: userId, token, sync_enabled: 0 })
      .onConflict((oc) => oc.column('user_id').doUpdateSet({ token }))
      .execute();
    return trx.selectFrom('kobo_user_settings').selectAll().where('user_id', '=', userId).executeTakeFirstOrThrow();
  });
}

export interface KoboSettingsUpdate {
  syncEnabled?: unknown;
  progressMarkAsReadingThreshold?: unknown;
  progressMarkAsFinishedThreshold?: unknown;
  autoAddToShelf?: unknown;
  twoWayProgressSync?: unknown;
}

function flag(value: unknown, name: string): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw new KoboSettingsError('INVALID', `${name}: must be a boolean`);
  return value;
}

function threshold(value: unknown, name: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 100) throw new KoboSettingsError('INVALID', `${name}: must be a number from 0 to 100`);
  return value;
}

/**
 * Applies a settings form. Turning sync on creates the Kobo shelf, turning it off deletes it; thresholds left out (or
 * null) keep their value; the switches are always taken as sent (a missing one is off), as Grimmory reads its form.
 */
export async function updateKoboSettings(db: Db, userId: number, input: KoboSettingsUpdate): Promise<KoboSettingsRow> {
  const syncEnabled = flag(input.syncEnabled, 'syncEnabled');
  const autoAdd = flag(input.autoAddToShelf, 'autoAddToShelf');
  const twoWay = flag(input.twoWayProgressSync, 'twoWayProgressSync');
  const reading = threshold(input.progressMarkAsReadingThreshold, 'progressMarkAsReadingThreshold');
  const finished = threshold(input.progressMarkAsFinishedThreshold, 'progressMarkAsFinishedThreshold');
  const current = await koboSettingsFor(db, userId);
  return db.transaction().execute(async (trx) => {
    if (syncEnabled !== (current.sync_enabled === 1)) {
      if (syncEnabled) await ensureKoboShelf(trx, userId);
      else await deleteKoboShelf(trx, userId);
    }
    // Auto-add shelves books added from now on, not the whole library.
    let watermark = current.auto_add_after_book_id;
    if (autoAdd && current.auto_add_to_shelf !== 1) {
      const newest = await trx.selectFrom('book').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst();
      watermark = newest?.id ?? 0;
    }
    await trx
      .updateTable('kobo_user_settings')
      .set({
        sync_enabled: syncEnabled ? 1 : 0,
        auto_add_to_shelf: autoAdd ? 1 : 0,
        auto_add_after_book_id: watermark,
        two_way_progress_sync: twoWay ? 1 : 0,
        ...(reading !== undefined ? { progress_mark_as_reading_threshold: reading } : {}),
        ...(finished !== undefined ? { progress_mark_as_finished_threshold: finished } : {}),
      })
      .where('user_id', '=', userId)
      .execute();
    return trx.selectFrom('kobo_user_settings').selectAll().where('user_id', '=', userId).executeTakeFirstOrThrow();
  });
}

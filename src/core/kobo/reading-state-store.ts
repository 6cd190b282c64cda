// Reading state kept for Kobo devices: the states devices send (merged part by part), the progress and read status
// they imply in Bindery (with the user's thresholds), and the states a sync sends back.
import type { Selectable, Transaction } from 'kysely';
import type { DB } from '../store/db-types.ts';
import { lockKeyForTransaction } from '../store/key-locks.ts';
import { progressKey } from '../reading/progress-rows.ts';
import type { Db } from '../store/store.ts';
import type { KoboBook, KoboPrimaryFile, KoboReader } from './kobo-books.ts';
import { dialectOf } from '../store/dialect.ts';
import { kyselyExec, rowsOf } from '../store/sql-exec.ts';
import type { KoboReadingStateTable } from '../store/db-types.ts';
import type { LocationLoader } from './span-locations.ts';
import { koboTimestamp, parseKoboTime } from './kobo-time.ts';
import {
  bookmarkFromProgress,
  emptyBookmark,
  firstState,
  hasBookmarkData,
  keepsBinderyStatus,
  mergeStates,
  normalizeStateTimes,
  orderedState,
  stampMissingTimes,
  stateFromProgress,
  statusFromKoboPercent,
  statusInfoFromProgress,
  webReaderIsNewer,
  type FileProgressForKobo,
  type KoboBookmark,
  type KoboReadingState,
  type KoboStatusInfo,
  type ProgressForKobo,
  type Thresholds,
} from './reading-state.ts';

type Exec = Db | Transaction<DB>;

const PROGRESS_COLUMNS = [
  'book_id', 'read_status', 'read_status_modified_time', 'date_finished', 'last_read_time', 'epub_progress', 'epub_progress_href',
  'epub_progress_percent', 'kobo_progress_percent', 'kobo_location', 'kobo_location_type', 'kobo_location_source',
  'kobo_progress_received_time', 'kobo_progress_sent_time', 'kobo_status_sent_time',
] as const;

type ProgressRow = ProgressForKobo & { book_id: number };

/** A Kysely connection or transaction as a KoboReader, for the per-book calls. */
export const readerOf = (db: Exec): KoboReader => ({ exec: kyselyExec(db), dialect: dialectOf(db) });

export async function progressRows(reader: KoboReader, userId: number, bookIds: readonly number[]): Promise<Map<number, ProgressRow>> {
  const rows = await rowsOf<ProgressRow>(reader.exec, `SELECT ${PROGRESS_COLUMNS.join(', ')} FROM user_book_progress WHERE user_id = ? AND book_id IN (${reader.dialect.jsonValues('integer')})`, [userId, JSON.stringify(bookIds)]);
  return new Map(rows.map((r) => [r.book_id, r]));
}

/** The web reader's progress in each book's synced EPUB (the primary file), by book id. */
export async function syncedFileProgress(reader: KoboReader, userId: number, primaries: ReadonlyMap<number, KoboPrimaryFile | undefined>): Promise<Map<number, FileProgressForKobo>> {
  const bookOfFile = new Map<number, number>();
  for (const [bookId, file] of primaries) if (file?.bookType === 'EPUB') bookOfFile.set(file.id, bookId);
  const out = new Map<number, FileProgressForKobo>();
  if (bookOfFile.size === 0) return out;
  const rows = await rowsOf<FileProgressForKobo & { book_file_id: number }>(
    reader.exec,
    `SELECT book_file_id, progress_percent, content_source_progress_percent, position_href, position_data, last_read_time FROM user_book_file_progress
      WHERE user_id = ? AND book_file_id IN (${reader.dialect.jsonValues('integer')})`,
    [userId, JSON.stringify([...bookOfFile.keys()])],
  );
  for (const r of rows) out.set(bookOfFile.get(r.book_file_id) as number, r);
  return out;
}

const parseJson = <T>(text: string | null): T | undefined => {
  if (text === null) return undefined;
  try {
    return (JSON.parse(text) as T | null) ?? undefined;
  } catch {
    return undefined;
  }
};

/** The state a device last stored for the book, as kept (parts merged). */
export async function storedStates(reader: KoboReader, userId: number, entitlementIds: readonly string[]): Promise<Map<string, KoboReadingState>> {
  const out = new Map<string, KoboReadingState>();
  const rows = await rowsOf<Selectable<KoboReadingStateTable>>(reader.exec, `SELECT * FROM kobo_reading_state WHERE user_id = ? AND entitlement_id IN (${reader.dialect.jsonValues('text')})`, [userId, JSON.stringify(entitlementIds)]);
  for (const r of rows) {
    const state: KoboReadingState = { EntitlementId: r.entitlement_id };
    if (r.created !== null) state.Created = r.created;
    if (r.last_modified_string ?? r.last_modified) state.LastModified = (r.last_modified_string ?? r.last_modified) as string;
    const status = parseJson<KoboReadingState['StatusInfo']>(r.status_info_json);
    const stats = parseJson<KoboReadingState['Statistics']>(r.statistics_json);
    const mark = parseJson<KoboReadingState['CurrentBookmark']>(r.current_bookmark_json);
    if (status) state.StatusInfo = status;
    if (stats) state.Statistics = stats;
    if (mark) state.CurrentBookmark = mark;
    if (r.priority_timestamp !== null) state.PriorityTimestamp = r.priority_timestamp;
    out.set(r.entitlement_id, state);
  }
  return out;
}

async function saveState(trx: Transaction<DB>, userId: number, entitlementId: string, state: KoboReadingState): Promise<void> {
  const json = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v));
  const values = {
    created: state.Created ?? null,
    last_modified: state.LastModified ?? null,
    last_modified_string: state.LastModified ?? null,
    priority_timestamp: state.PriorityTimestamp ?? null,
    current_bookmark_json: json(state.CurrentBookmark),
    statistics_json: json(state.Statistics),
    status_info_json: json(state.StatusInfo),
  };
  await trx
    .insertInto('kobo_reading_state')
    .values({ user_id: userId, entitlement_id: entitlementId, ...values })
    .onConflict((oc) => oc.columns(['user_id', 'entitlement_id']).doUpdateSet(values))
    .execute();
}

export interface DeviceContext {
  userId: number;
  twoWay: boolean;
  thresholds: Thresholds;
}

/** A book the device reported on: its id and its synced EPUB, when it has one. */
export interface ReportedBook {
  id: number;
  primary: KoboPrimaryFile | undefined;
}

/**
 * What a device's state means in Bindery: the Kobo position and percent, the time it was received, the web-reader
 * position too with two-way sync (unless the web reader moved on since), and the read status (unless the status was
 * set in Bindery and not yet sent to the device): the device's own `Finished` (read, on the device's finishing date)
 * or `ReadyToRead` (unread) when it sent one, otherwise what its percent means under the thresholds. A Kobo that
 * finishes a book reports its bookmark at the first resource, so a `Finished` state keeps the book at 100 % and the
 * earlier position, instead of moving progress back to the start. Returns the device's percent when it became the
 * book's progress (not when the web reader has moved on since).
 */
async function applyDeviceState(trx: Transaction<DB>, ctx: DeviceContext, book: ReportedBook, state: KoboReadingState, deviceStatus: KoboStatusInfo | undefined, now: Date): Promise<number | undefined> {
  const row = (await progressRows(readerOf(trx), ctx.userId, [book.id])).get(book.id);
  const finished = deviceStatus?.Status === 'Finished';
  // The bookmark of a finished book points at its start: it says nothing about how far the reader got.
  const bookmark = finished ? undefined : state.CurrentBookmark;
  const patch: Record<string, unknown> = {};
  if (finished) patch.kobo_progress_percent = 100;
  if (bookmark?.ProgressPercent !== undefined) patch.kobo_progress_percent = bookmark.ProgressPercent;
  if (bookmark?.Location) {
    patch.kobo_location = bookmark.Location.Value ?? null;
    patch.kobo_location_type = bookmark.Location.Type ?? null;
    patch.kobo_location_source = bookmark.Location.Source ?? null;
  }
  const bookmarkTime = parseKoboTime(bookmark?.LastModified);
  const effective = bookmarkTime ?? parseKoboTime(deviceStatus?.LastModified) ?? now;
  const epubFile = book.primary?.bookType === 'EPUB' ? book.primary : undefined;
  const fileProgress = epubFile ? (await syncedFileProgress(readerOf(trx), ctx.userId, new Map([[book.id, epubFile]]))).get(book.id) : undefined;
  const webTime = parseKoboTime(fileProgress?.last_read_time);
  const webNewer = ctx.twoWay && bookmarkTime !== undefined && webTime !== undefined && webTime > bookmarkTime;
  if (finished || (bookmark && (bookmark.ProgressPercent !== undefined || bookmark.Location !== undefined))) patch.kobo_progress_received_time = effective.toISOString();

  if (ctx.twoWay && bookmark?.ProgressPercent !== undefined && !webNewer) {
    const source = bookmark.Location?.Source ?? null;
    Object.assign(patch, { epub_progress_percent: bookmark.ProgressPercent, epub_progress: null, epub_progress_href: source, last_read_time: effective.toISOString() });
    if (epubFile) {
      const values = {
        progress_percent: bookmark.ProgressPercent,
        content_source_progress_percent: bookmark.ContentSourceProgressPercent ?? null,
        position_data: null,
        position_href: source,
        last_read_time: effective.toISOString(),
      };
      await trx
        .insertInto('user_book_file_progress')
        .values({ user_id: ctx.userId, book_file_id: epubFile.id, ...values })
        .onConflict((oc) => oc.columns(['user_id', 'book_file_id']).doUpdateSet(values))
        .execute();
    }
  }

  const percent = (patch.kobo_progress_percent as number | undefined) ?? row?.kobo_progress_percent ?? null;
  const current = { read_status_modified_time: row?.read_status_modified_time ?? null, kobo_status_sent_time: row?.kobo_status_sent_time ?? null };
  const stated = deviceStatus?.Status === 'Finished' ? 'READ' : deviceStatus?.Status === 'ReadyToRead' ? 'UNREAD' : undefined;
  if ((stated !== undefined || (percent !== null && !webNewer)) && !keepsBinderyStatus(current, effective)) {
    const status = stated ?? statusFromKoboPercent(percent as number, ctx.thresholds);
    patch.read_status = status;
    const finishedOn = finished ? parseKoboTime(deviceStatus?.LastTimeFinished) : undefined;
    if (finishedOn) patch.date_finished = finishedOn.toISOString();
    else if (status === 'READ' && !row?.date_finished) patch.date_finished = now.toISOString();
  }
  if (Object.keys(patch).length === 0) return undefined;
  await trx
    .insertInto('user_book_progress')
    .values({ user_id: ctx.userId, book_id: book.id, ...patch })
    .onConflict((oc) => oc.columns(['user_id', 'book_id']).doUpdateSet(patch))
    .execute();
  if (finished) return 100;
  return webNewer ? undefined : bookmark?.ProgressPercent;
}

/**
 * Stores one state a device sent for a book and applies it to the user's progress; returns the device's percent when
 * it became the book's progress.
 */
export async function saveDeviceState(db: Db, ctx: DeviceContext, book: ReportedBook, incoming: KoboReadingState, now: Date = new Date()): Promise<number | undefined> {
  const entitlementId = String(book.id);
  const stamped = stampMissingTimes({ ...incoming, EntitlementId: entitlementId }, now);
  return db.transaction().execute(async (trx) => {
    // Two reports for the same book at once (two replicas) take turns: each merges with what the other stored.
    await lockKeyForTransaction(trx, progressKey(ctx.userId, book.id));
    const existing = (await storedStates(readerOf(trx), ctx.userId, [entitlementId])).get(entitlementId);
    const state = existing ? mergeStates(existing, stamped) : firstState(stamped, now);
    await saveState(trx, ctx.userId, entitlementId, state);
    // Only a status this report brought counts (an older stored one was applied when it came).
    const deviceStatus = state.StatusInfo !== undefined && state.StatusInfo === stamped.StatusInfo ? stamped.StatusInfo : undefined;
    return applyDeviceState(trx, ctx, book, state, deviceStatus, now);
  });
}

/**
 * The state a device reads for one book: the stored one, or one built from progress; with two-way sync the web
 * reader's newer position replaces the bookmark. Undefined when nothing is known.
 */
export async function readingStateFor(db: Db, ctx: DeviceContext, book: ReportedBook, locations?: LocationLoader): Promise<KoboReadingState | undefined> {
  const entitlementId = String(book.id);
  const resolve = ctx.twoWay && locations ? (await locations(new Map([[book.id, book.primary]])))(book.id) : undefined;
  const reader = readerOf(db);
  const stored = (await storedStates(reader, ctx.userId, [entitlementId])).get(entitlementId);
  const progress = (await progressRows(reader, ctx.userId, [book.id])).get(book.id);
  const file = (await syncedFileProgress(reader, ctx.userId, new Map([[book.id, book.primary]]))).get(book.id);
  let state = stored;
  if (!state && progress && (progress.kobo_progress_percent !== null || progress.kobo_location !== null || (ctx.twoWay && progress.epub_progress_percent !== null))) {
    state = stateFromProgress(entitlementId, progress, file, ctx.twoWay, resolve);
  }
  if (!state) return undefined;
  if (progress && webReaderIsNewer(progress, ctx.twoWay)) state = { ...state, CurrentBookmark: bookmarkFromProgress(progress, file, ctx.twoWay, undefined, resolve) };
  return orderedState(normalizeStateTimes(state));
}

/** The ReadingState of a NewEntitlement, for each book of a page. */
export async function initialStates(reader: KoboReader, ctx: DeviceContext, books: readonly Pick<KoboBook, 'id' | 'created' | 'primary'>[], now: Date, locations?: LocationLoader): Promise<Map<number, KoboReadingState>> {
  const ids = books.map((b) => b.id);
  const [stored, progress, files] = await Promise.all([
    storedStates(reader, ctx.userId, ids.map(String)),
    progressRows(reader, ctx.userId, ids),
    syncedFileProgress(reader, ctx.userId, new Map(books.map((b) => [b.id, b.primary]))),
  ]);
  // Positions are placed in the KEPUB only for books with progress: the others' span maps are not read at all.
  const resolverFor = ctx.twoWay && locations ? await locations(new Map(books.filter((b) => progress.has(b.id)).map((b) => [b.id, b.primary]))) : undefined;
  const at = koboTimestamp(now);
  const out = new Map<number, KoboReadingState>();
  // Every property set, in Kobo's order (orderedState's): the states are sent as they are.
  for (const book of books) {
    const row = progress.get(book.id);
    let bookmark: KoboBookmark | undefined;
    if (row) {
      const file = files.get(book.id);
      const resolve = resolverFor?.(book.id);
      if (webReaderIsNewer(row, ctx.twoWay)) bookmark = bookmarkFromProgress(row, file, ctx.twoWay, now, resolve);
      else bookmark = stored.get(String(book.id))?.CurrentBookmark ?? (hasBookmarkData(row, ctx.twoWay) ? bookmarkFromProgress(row, file, ctx.twoWay, now, resolve) : undefined);
    } else if (stored.size > 0) bookmark = stored.get(String(book.id))?.CurrentBookmark;
    out.set(book.id, {
      EntitlementId: String(book.id),
      Created: book.created ?? at,
      LastModified: at,
      StatusInfo: row ? statusInfoFromProgress(row, at) : { LastModified: at, Status: 'ReadyToRead', TimesStartedReading: 0 },
      Statistics: { LastModified: at },
      CurrentBookmark: bookmark ?? { LastModified: at },
      PriorityTimestamp: at,
    });
  }
  return out;
}

const later = (a: string | null, b: string | null): boolean => {
  const x = parseKoboTime(a);
  if (x === undefined) return false;
  const y = parseKoboTime(b);
  return y === undefined || x > y;
};

/** A status set in Bindery the device has not been sent. */
const statusPending = (p: ProgressForKobo): boolean => p.read_status_modified_time !== null && later(p.read_status_modified_time, p.kobo_status_sent_time);
/** A Kobo bookmark received and not yet echoed back. */
const koboPending = (p: ProgressForKobo): boolean => p.kobo_progress_received_time !== null && later(p.kobo_progress_received_time, p.kobo_progress_sent_time);
/** A web-reader position the device has not been sent (two-way sync). */
const webPending = (p: ProgressForKobo): boolean => p.epub_progress_percent !== null && p.epub_progress !== null && later(p.last_read_time, p.kobo_progress_sent_time);

/** The reading states due at the end of a sync, and which books' stamps to set once they are on their way. */
export interface PendingStates {
  states: KoboReadingState[];
  sent: { at: string; status: number[]; progress: number[] };
}

/**
 * Reading states for the end of a sync: books of the snapshot whose status changed in Bindery, whose Kobo bookmark
 * was received but not echoed, and with two-way sync whose web-reader position is newer than what was sent. Reads
 * only: the page stamps them as sent afterwards (stampSent, as reading state).
 */
export async function pendingStates(db: Exec, ctx: DeviceContext, snapshotId: string, primaries: (ids: number[]) => Promise<ReadonlyMap<number, KoboPrimaryFile | undefined>>, now: Date, locations?: LocationLoader): Promise<PendingStates> {
  const sent = { at: now.toISOString(), status: [] as number[], progress: [] as number[] };
  const candidates = await db
    .selectFrom('user_book_progress')
    .select(PROGRESS_COLUMNS)
    .where('user_id', '=', ctx.userId)
    .where('book_id', 'in', (eb) => eb.selectFrom('kobo_library_snapshot_book').select('book_id').where('snapshot_id', '=', snapshotId))
    .where((eb) => eb.or([eb('read_status_modified_time', 'is not', null), eb('kobo_progress_received_time', 'is not', null), eb('epub_progress_percent', 'is not', null)]))
    .execute();
  const due = candidates.filter((p) => statusPending(p) || koboPending(p) || (ctx.twoWay && webPending(p)));
  if (due.length === 0) return { states: [], sent };
  const ids = due.map((p) => p.book_id);
  const primaryOf = await primaries(ids);
  const files = await syncedFileProgress(readerOf(db), ctx.userId, primaryOf);
  const resolverFor = ctx.twoWay && locations ? await locations(primaryOf) : () => undefined;
  const at = koboTimestamp(now);
  const states: KoboReadingState[] = [];
  for (const p of due) {
    const file = files.get(p.book_id);
    states.push({
      EntitlementId: String(p.book_id),
      Created: at,
      LastModified: at,
      StatusInfo: statusInfoFromProgress(p, at),
      Statistics: { LastModified: at },
      CurrentBookmark: hasBookmarkData(p, ctx.twoWay) ? bookmarkFromProgress(p, file, ctx.twoWay, now, resolverFor(p.book_id)) : emptyBookmark(now),
      PriorityTimestamp: at,
    });
    if (statusPending(p)) sent.status.push(p.book_id);
    if (koboPending(p) || (ctx.twoWay && webPending(p))) sent.progress.push(p.book_id);
  }
  return { states, sent };
}

/** Stamps the states of pendingStates as sent; `db`: Store.readingState.db. */
export async function stampSent(db: Db, userId: number, sent: PendingStates['sent']): Promise<void> {
  if (sent.status.length === 0 && sent.progress.length === 0) return;
  await db.transaction().execute(async (trx) => {
    for (const [column, bookIds] of [['kobo_status_sent_time', sent.status], ['kobo_progress_sent_time', sent.progress]] as const) {
      for (let i = 0; i < bookIds.length; i += 500) {
        await trx.updateTable('user_book_progress').set({ [column]: sent.at }).where('user_id', '=', userId).where('book_id', 'in', bookIds.slice(i, i + 500)).execute();
      }
    }
  });
}

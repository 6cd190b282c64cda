// KOReader progress in and out: a pushed position lands in the koreader_* columns of the user's progress row and moves
// the read status; with "sync with web reader" on it also becomes the web reader's position, and a pull offers
// whichever of the two is newer. Documents that match no visible book are kept per user, as KOReader's own sync
// server keeps any document it is sent.
import { readerKind } from '../reading/book-files.ts';
import { recordProgress } from '../reading/progress.ts';
import { READ_THRESHOLD, roundPercent, type ReadStatus } from '../reading/read-status.ts';
import type { Db } from '../store/store.ts';
import { nowIso } from '../time.ts';
import type { SyncSession } from './accounts.ts';
import { findDocument, type DocumentFile } from './documents.ts';
import { cfiToXPointer, xpointerToCfi } from './epub-positions.ts';

/** KOReader's notion of "started": at or above this percent a pushed position marks the book READING. */
export const KOREADER_READING_THRESHOLD = 0.25;

/**
 * The status a KOReader push sets (Grimmory's KOReader rule, unlike the web reader's: a low percentage does demote
 * the book to UNREAD). `fraction` is KOReader's 0..1 percentage, taken as a 32-bit float as Grimmory does.
 */
export function koreaderReadStatus(fraction: number): ReadStatus {
  const percent = Math.fround(fraction) * 100;
  if (percent >= READ_THRESHOLD) return 'READ';
  if (percent >= KOREADER_READING_THRESHOLD) return 'READING';
  return 'UNREAD';
}

/** What KOReader sends in `PUT /syncs/progress` (validated by the caller). */
export interface KoreaderPush {
  document: string;
  progress: string;
  percentage: number;
  device: string;
  deviceId: string | null;
}

/** A position as `GET /syncs/progress/{document}` returns it; absent fields were never stored. */
export interface KoreaderPosition {
  document: string;
  percentage: number;
  progress: string;
  device?: string;
  device_id?: string;
  timestamp?: number;
}

/** How the web reader's position is labelled when it is offered to a KOReader device. */
export const WEB_READER_DEVICE = 'Bindery web reader';
export const WEB_READER_DEVICE_ID = 'bindery-web-reader';

const epochSeconds = (iso: string): number => Math.floor(Date.parse(iso) / 1000);

const pageNumber = (text: string | null | undefined): string | undefined => (text !== null && text !== undefined && /^\s*\d+\s*$/.test(text) ? String(Number(text)) : undefined);

const isEpub = (file: DocumentFile): boolean => file.bookType === 'EPUB' && file.path !== undefined;

/** The web reader's position for a KOReader one, in that file's reader; null when the file has no web reader. */
async function webPositionFor(file: DocumentFile, push: KoreaderPush): Promise<string | null | undefined> {
  switch (readerKind(file.bookType)) {
    case 'pdf':
    case 'cbx':
      return pageNumber(push.progress) ?? null;
    case 'ebook':
      // Without a CFI the web reader opens at the percentage.
      return isEpub(file) ? ((await xpointerToCfi(file.path as string, push.progress)) ?? null) : null;
    default:
      return undefined;
  }
}

/** Stores a pushed position and returns the server time it was stored at (epoch seconds). */
export async function pushProgress(db: Db, session: SyncSession, push: KoreaderPush, now: string = nowIso()): Promise<number> {
  const userId = session.principal.userId;
  const file = await findDocument(db, session.principal, push.document);
  if (!file) {
    const values = { progress: push.progress, percentage: push.percentage, device: push.device, device_id: push.deviceId, synced_at: now };
    await db
      .insertInto('koreader_document_progress')
      .values({ ...values, user_id: userId, document: push.document })
      .onConflict((oc) => oc.columns(['user_id', 'document']).doUpdateSet(values))
      .execute();
    return epochSeconds(now);
  }

  if (session.syncWithWebReader) {
    const position = await webPositionFor(file, push);
    if (position !== undefined) {
      const percent = Math.min(100, Math.max(0, roundPercent(Math.fround(Math.fround(push.percentage) * 100))));
      await recordProgress(db, userId, { bookId: file.bookId, fileProgress: { bookFileId: file.fileId, positionData: position, positionHref: null, progressPercent: percent } }, now);
    }
  }

  const status = koreaderReadStatus(push.percentage);
  const patch = {
    koreader_progress: push.progress,
    koreader_progress_percent: push.percentage,
    koreader_device: push.device,
    koreader_device_id: push.deviceId,
    koreader_last_sync_time: now,
    last_read_time: now,
    read_status: status,
    ...(status === 'READ' ? { date_finished: now } : {}),
  };
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('user_book_progress')
      .values({ ...patch, user_id: userId, book_id: file.bookId })
      .onConflict((oc) => oc.columns(['user_id', 'book_id']).doUpdateSet(patch))
      .execute();
    // A position kept while the book was unknown is superseded by the book's own.
    await trx.deleteFrom('koreader_document_progress').where('user_id', '=', userId).where('document', '=', push.document).execute();
  });
  return epochSeconds(now);
}

function position(document: string, fields: { percentage: number; progress: string; device: string | null; deviceId: string | null; time: string | null }): KoreaderPosition {
  const out: KoreaderPosition = { document, percentage: fields.percentage, progress: fields.progress };
  if (fields.device !== null) out.device = fields.device;
  if (fields.deviceId !== null) out.device_id = fields.deviceId;
  if (fields.time !== null && !Number.isNaN(Date.parse(fields.time))) out.timestamp = epochSeconds(fields.time);
  return out;
}

/** The web reader's position in this file as a KOReader position, when it can be expressed as one. */
async function webPosition(db: Db, userId: number, file: DocumentFile, document: string): Promise<{ position: KoreaderPosition; time: number } | undefined> {
  const row = await db
    .selectFrom('user_book_file_progress')
    .select(['position_data', 'progress_percent', 'last_read_time'])
    .where('user_id', '=', userId)
    .where('book_file_id', '=', file.fileId)
    .executeTakeFirst();
  if (!row || row.progress_percent === null || row.last_read_time === null || Number.isNaN(Date.parse(row.last_read_time))) return undefined;
  let progress: string | undefined;
  const kind = readerKind(file.bookType);
  if (kind === 'pdf' || kind === 'cbx') progress = pageNumber(row.position_data);
  else if (isEpub(file) && row.position_data?.startsWith('epubcfi(')) progress = await cfiToXPointer(file.path as string, row.position_data);
  if (progress === undefined) return undefined;
  const percentage = Math.min(1, Math.max(0, row.progress_percent / 100));
  return {
    position: position(document, { percentage, progress, device: WEB_READER_DEVICE, deviceId: WEB_READER_DEVICE_ID, time: row.last_read_time }),
    time: Date.parse(row.last_read_time),
  };
}

async function keptPosition(db: Db, userId: number, document: string): Promise<KoreaderPosition | undefined> {
  const row = await db
    .selectFrom('koreader_document_progress')
    .select(['progress', 'percentage', 'device', 'device_id', 'synced_at'])
    .where('user_id', '=', userId)
    .where('document', '=', document)
    .executeTakeFirst();
  return row ? position(document, { percentage: row.percentage, progress: row.progress, device: row.device, deviceId: row.device_id, time: row.synced_at }) : undefined;
}

/**
 * The position to offer a KOReader device for this document: the last KOReader push, or, with "sync with web reader"
 * on, the web reader's position when it is newer and can be expressed as a KOReader position. Undefined when there is
 * none (the protocol then answers `{}`).
 */
export async function pullProgress(db: Db, session: SyncSession, document: string): Promise<KoreaderPosition | undefined> {
  const userId = session.principal.userId;
  const file = await findDocument(db, session.principal, document);
  if (!file) return keptPosition(db, userId, document);

  const row = await db
    .selectFrom('user_book_progress')
    .select(['koreader_progress', 'koreader_progress_percent', 'koreader_device', 'koreader_device_id', 'koreader_last_sync_time'])
    .where('user_id', '=', userId)
    .where('book_id', '=', file.bookId)
    .executeTakeFirst();
  const own =
    row && row.koreader_progress !== null && row.koreader_progress_percent !== null
      ? position(document, { percentage: row.koreader_progress_percent, progress: row.koreader_progress, device: row.koreader_device, deviceId: row.koreader_device_id, time: row.koreader_last_sync_time })
      : undefined;

  if (session.syncWithWebReader) {
    const web = await webPosition(db, userId, file, document);
    const ownTime = row?.koreader_last_sync_time ? Date.parse(row.koreader_last_sync_time) : Number.NaN;
    // A tie goes to KOReader: a push with web sync on writes both at the same instant.
    if (web && (!own || Number.isNaN(ownTime) || web.time > ownTime)) return web.position;
  }
  return own ?? keptPosition(db, userId, document);
}

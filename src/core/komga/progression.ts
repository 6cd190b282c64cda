// Readium progressions (`GET`/`PUT …/books/{id}/progression`) over Bindery's reading progress. A PUT is stored as the
// book's progress like any reader's (percent through the book, the chapter, the status it implies), so the web UI,
// KOReader, Kobo and Mihon see it; the exact locator is kept beside it (komga_progression) so the EPUB reader reopens
// at the same spot. When another client has moved the progress since, GET answers with a locator made from that
// progress instead.
import { recordProgress } from '../reading/progress.ts';
import { READ_THRESHOLD, roundPercent } from '../reading/read-status.ts';
import type { Store } from '../store/store.ts';
import { nowIso } from '../time.ts';
import { positionAt, positionAtTotal, totalProgressionAt, type Position } from './webpub.ts';

export class ProgressionError extends Error {
  readonly status: 400 | 409;

  constructor(status: 400 | 409, message: string) {
    super(message);
    this.status = status;
  }
}

export interface Locator {
  href: string;
  type: string;
  title?: string;
  locations: { progression: number; position?: number; totalProgression?: number; fragments?: string[] };
  text?: Record<string, string>;
  koboSpan?: string;
}

export interface Progression {
  modified: string;
  device: { id: string; name: string };
  locator: Locator;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The archive path a locator's href names: the path itself, or a resource URL (`…/resource/<path>`), without its
 * fragment, percent-decoded.
 */
export function locatorPath(href: string): string {
  const marker = href.indexOf('/resource/');
  const path = (marker >= 0 ? href.slice(marker + '/resource/'.length) : href).replace(/[#?].*$/, '').replace(/^\/+/, '');
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/** A PUT body checked as Komga checks it (modified, device and a locator with a progression are required). */
export function parseProgression(body: unknown): Progression {
  if (!isObject(body)) throw new ProgressionError(400, 'A JSON object is required');
  const { modified, device, locator } = body;
  if (typeof modified !== 'string' || Number.isNaN(Date.parse(modified))) throw new ProgressionError(400, 'modified must be an ISO-8601 date-time');
  if (!isObject(device) || typeof device.id !== 'string' || typeof device.name !== 'string') throw new ProgressionError(400, 'device must have an id and a name');
  if (!isObject(locator) || typeof locator.href !== 'string') throw new ProgressionError(400, 'locator.href is required');
  const locations = isObject(locator.locations) ? locator.locations : {};
  const progression = locations.progression;
  if (typeof progression !== 'number' || !Number.isFinite(progression) || progression < 0 || progression > 1) throw new ProgressionError(400, 'locator.locations.progression is required (0 to 1)');
  const out: Locator = { href: locator.href, type: typeof locator.type === 'string' ? locator.type : '', locations: { progression } };
  if (typeof locator.title === 'string') out.title = locator.title;
  if (typeof locator.koboSpan === 'string') out.koboSpan = locator.koboSpan;
  if (isObject(locator.text)) out.text = Object.fromEntries(Object.entries(locator.text).filter((e): e is [string, string] => typeof e[1] === 'string'));
  if (Array.isArray(locations.fragments)) out.locations.fragments = locations.fragments.filter((f): f is string => typeof f === 'string');
  return { modified: new Date(Date.parse(modified)).toISOString(), device: { id: device.id, name: device.name }, locator: out };
}

interface StoredRow {
  locator: string;
  device_id: string;
  device_name: string;
  modified: string;
  recorded_at: string;
}

interface ProgressRow {
  last_read_time: string | null;
  read_status: string | null;
  epub_progress_href: string | null;
  epub_progress_percent: number | null;
}

async function progressRow(store: Store, userId: number, bookId: number): Promise<ProgressRow | undefined> {
  return (await store.exec.get('SELECT last_read_time, read_status, epub_progress_href, epub_progress_percent FROM user_book_progress WHERE user_id = ? AND book_id = ?', [userId, bookId])) as
    | ProgressRow
    | undefined;
}

async function storedRow(store: Store, userId: number, bookId: number): Promise<StoredRow | undefined> {
  return (await store.exec.get('SELECT locator, device_id, device_name, modified, recorded_at FROM komga_progression WHERE user_id = ? AND book_id = ?', [userId, bookId])) as
    | StoredRow
    | undefined;
}

/** The stored locator is current when no reader has moved the book's progress since it was stored. */
const isCurrent = (stored: StoredRow | undefined, progress: ProgressRow | undefined): stored is StoredRow =>
  stored !== undefined && (progress?.last_read_time ?? '') <= stored.recorded_at;

const withTotal = (locator: Locator, position: Position | undefined, totalProgression: number): Locator => ({
  ...locator,
  ...(position && locator.type === '' ? { type: position.type } : {}),
  locations: { ...locator.locations, ...(position ? { position: position.locations.position } : {}), totalProgression },
});

/** The reader's progression in the book, or undefined when they have none (Komga's 204). */
export async function readProgression(store: Store, userId: number, bookId: number, positions: readonly Position[]): Promise<Progression | undefined> {
  const progress = await progressRow(store, userId, bookId);
  const stored = await storedRow(store, userId, bookId);
  if (isCurrent(stored, progress)) {
    return { modified: stored.modified, device: { id: stored.device_id, name: stored.device_name }, locator: JSON.parse(stored.locator) as Locator };
  }
  if (!progress?.last_read_time) return undefined;
  const read = progress.read_status === 'READ';
  const total = read ? 1 : Math.min(1, Math.max(0, (progress.epub_progress_percent ?? 0) / 100));
  const href = progress.epub_progress_href;
  // The chapter another reader recorded when it is one of the book's, else the position the percentage falls on.
  const position = (!read && href ? positions.find((p) => p.href === locatorPath(href)) : undefined) ?? positionAtTotal(positions, total);
  if (!position) return undefined;
  const inDocument = read ? 1 : position.locations.progression;
  return {
    modified: new Date(Date.parse(progress.last_read_time)).toISOString(),
    device: { id: '', name: '' },
    locator: { href: position.href, type: position.type, locations: { progression: inDocument, position: position.locations.position, totalProgression: total } },
  };
}

export interface ProgressionTarget {
  bookId: number;
  /** The EPUB file the positions are of. */
  fileId: number;
  positions: readonly Position[];
}

/**
 * Stores a progression: refuses one older than the progress it would replace (409, as Komga) and a locator outside the
 * book's reading order (400); the book's progress becomes the locator's share of the book (read from 99 %).
 */
export async function writeProgression(store: Store, userId: number, target: ProgressionTarget, progression: Progression, now: string = nowIso()): Promise<void> {
  const progress = await progressRow(store, userId, target.bookId);
  const stored = await storedRow(store, userId, target.bookId);
  const previous = isCurrent(stored, progress) ? stored.modified : progress?.last_read_time;
  if (previous && Date.parse(previous) > Date.parse(progression.modified)) throw new ProgressionError(409, 'Progression is older than existing');
  const href = locatorPath(progression.locator.href);
  if (!target.positions.some((p) => p.href === href)) throw new ProgressionError(400, `Resource does not exist in book: ${href}`);
  const position = positionAt(target.positions, href, progression.locator.locations.progression);
  const total = totalProgressionAt(target.positions, href, progression.locator.locations.progression);
  const percent = total >= 0.99 ? 100 : roundPercent(Math.min(READ_THRESHOLD - 0.5, total * 100));
  await recordProgress(store.readingState.db, userId, { bookId: target.bookId, fileProgress: { bookFileId: target.fileId, positionData: null, positionHref: href, progressPercent: percent } }, now);
  const locator = JSON.stringify(withTotal({ ...progression.locator, href }, position, total));
  await store.readingState.exec.run(
    `INSERT INTO komga_progression (user_id, book_id, locator, device_id, device_name, modified, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (user_id, book_id) DO UPDATE SET locator = excluded.locator, device_id = excluded.device_id, device_name = excluded.device_name,
       modified = excluded.modified, recorded_at = excluded.recorded_at`,
    [userId, target.bookId, locator, progression.device.id, progression.device.name, progression.modified, now],
  );
}

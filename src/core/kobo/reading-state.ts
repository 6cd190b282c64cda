// Reading state between Bindery and a Kobo: the device's ReadingState shape, Bindery's read status as Kobo's
// StatusInfo, bookmarks built from Kobo or web-reader progress, merging what a device sends with what is stored, and
// the per-user thresholds that turn a Kobo percent into a read status.
import { koboTimestamp, normalizeKoboTime, parseKoboTime } from './kobo-time.ts';

export type KoboReadStatus = 'ReadyToRead' | 'Reading' | 'Finished';

export interface KoboLocation {
  Value?: string;
  Type?: string;
  Source?: string;
}

export interface KoboBookmark {
  LastModified?: string;
  ProgressPercent?: number;
  ContentSourceProgressPercent?: number;
  Location?: KoboLocation;
}

export interface KoboStatusInfo {
  LastModified?: string;
  Status?: string;
  TimesStartedReading?: number;
  LastTimeStartedReading?: string;
  LastTimeFinished?: string;
}

export interface KoboStatistics {
  LastModified?: string;
  SpentReadingMinutes?: number;
  RemainingTimeMinutes?: number;
}

export interface KoboReadingState {
  EntitlementId?: string;
  Created?: string;
  LastModified?: string;
  StatusInfo?: KoboStatusInfo;
  Statistics?: KoboStatistics;
  CurrentBookmark?: KoboBookmark;
  PriorityTimestamp?: string;
}

/** The columns of a user's progress row the Kobo mapping reads. */
export interface ProgressForKobo {
  read_status: string | null;
  read_status_modified_time: string | null;
  date_finished: string | null;
  last_read_time: string | null;
  epub_progress: string | null;
  epub_progress_href: string | null;
  epub_progress_percent: number | null;
  kobo_progress_percent: number | null;
  kobo_location: string | null;
  kobo_location_type: string | null;
  kobo_location_source: string | null;
  kobo_progress_received_time: string | null;
  kobo_progress_sent_time: string | null;
  kobo_status_sent_time: string | null;
}

/** The web reader's position in the synced EPUB (its per-file progress row). */
export interface FileProgressForKobo {
  progress_percent: number | null;
  content_source_progress_percent: number | null;
  position_href: string | null;
  position_data: string | null;
  last_read_time: string | null;
}

/** A place in the KEPUB found for a web-reader position (see span-map.ts). */
export interface ResolvedLocation {
  value: string;
  source: string;
  chapterPercent: number;
}

export type LocationResolver = (progress: ProgressForKobo, file: FileProgressForKobo | undefined) => ResolvedLocation | undefined;

export interface Thresholds {
  reading: number;
  finished: number;
}

const time = (value: string | null | undefined): number | undefined => parseKoboTime(value)?.getTime();
const stamp = (value: string | null | undefined): string | undefined => {
  const date = parseKoboTime(value);
  return date ? koboTimestamp(date) : undefined;
};

export function koboStatusOf(readStatus: string | null): KoboReadStatus {
  switch (readStatus) {
    case 'READ':
      return 'Finished';
    case 'READING':
    case 'RE_READING':
    case 'PARTIALLY_READ':
    case 'PAUSED':
      return 'Reading';
    default:
      return 'ReadyToRead';
  }
}

export function statusInfoFromProgress(progress: Pick<ProgressForKobo, 'read_status' | 'date_finished'>, lastModified: string | undefined): KoboStatusInfo {
  const status = koboStatusOf(progress.read_status);
  const info: KoboStatusInfo = { Status: status, TimesStartedReading: status === 'ReadyToRead' ? 0 : 1 };
  const out: KoboStatusInfo = lastModified !== undefined ? { LastModified: lastModified, ...info } : info;
  const finished = stamp(progress.date_finished);
  if (status === 'Finished' && finished !== undefined) out.LastTimeFinished = finished;
  return out;
}

/** With two-way sync, the web reader's EPUB position wins when it is newer than the last Kobo bookmark received. */
export function webReaderIsNewer(progress: ProgressForKobo, twoWay: boolean): boolean {
  if (!twoWay || progress.epub_progress_percent === null) return false;
  const lastRead = time(progress.last_read_time);
  if (lastRead === undefined) return false;
  const received = time(progress.kobo_progress_received_time);
  return received === undefined || lastRead > received;
}

export function emptyBookmark(now: Date): KoboBookmark {
  return { LastModified: koboTimestamp(now) };
}

function webReaderBookmark(progress: ProgressForKobo, file: FileProgressForKobo | undefined, now: Date | undefined, resolve: LocationResolver | undefined): KoboBookmark {
  const lastModified = stamp(progress.last_read_time) ?? (now ? koboTimestamp(now) : undefined);
  const resolved = resolve?.(progress, file);
  const bookmark: KoboBookmark = {};
  if (lastModified !== undefined) bookmark.LastModified = lastModified;
  bookmark.ProgressPercent = Math.round(progress.epub_progress_percent ?? 0);
  const chapter = resolved?.chapterPercent ?? file?.content_source_progress_percent ?? undefined;
  if (chapter !== undefined && chapter !== null) bookmark.ContentSourceProgressPercent = Math.round(chapter);
  if (resolved) bookmark.Location = { Value: resolved.value, Type: 'KoboSpan', Source: resolved.source };
  return bookmark;
}

function koboBookmark(progress: ProgressForKobo, file: FileProgressForKobo | undefined, now: Date | undefined): KoboBookmark {
  const lastModified = stamp(progress.kobo_progress_received_time) ?? (now ? koboTimestamp(now) : undefined);
  const bookmark: KoboBookmark = {};
  if (lastModified !== undefined) bookmark.LastModified = lastModified;
  if (progress.kobo_progress_percent !== null) bookmark.ProgressPercent = Math.round(progress.kobo_progress_percent);
  if (file?.content_source_progress_percent !== null && file?.content_source_progress_percent !== undefined) {
    bookmark.ContentSourceProgressPercent = Math.round(file.content_source_progress_percent);
  }
  if (progress.kobo_location !== null) {
    const location: KoboLocation = { Value: progress.kobo_location };
    if (progress.kobo_location_type !== null) location.Type = progress.kobo_location_type;
    if (progress.kobo_location_source !== null) location.Source = progress.kobo_location_source;
    bookmark.Location = location;
  }
  return bookmark;
}

/** The bookmark for a progress row: the web reader's when it is the newer (two-way sync), else the Kobo's own. */
export function bookmarkFromProgress(progress: ProgressForKobo, file: FileProgressForKobo | undefined, twoWay: boolean, now?: Date, resolve?: LocationResolver): KoboBookmark {
  return webReaderIsNewer(progress, twoWay) ? webReaderBookmark(progress, file, now, resolve) : koboBookmark(progress, file, now);
}

/** Whether the row holds anything a bookmark can be built from. */
export function hasBookmarkData(progress: ProgressForKobo, twoWay: boolean): boolean {
  return progress.kobo_progress_percent !== null || (twoWay && progress.epub_progress_percent !== null);
}

/** A state built from progress alone (no state stored for the book yet). */
export function stateFromProgress(entitlementId: string, progress: ProgressForKobo, file: FileProgressForKobo | undefined, twoWay: boolean, resolve?: LocationResolver): KoboReadingState {
  const bookmark = bookmarkFromProgress(progress, file, twoWay, undefined, resolve);
  const lastModified = bookmark.LastModified;
  const state: KoboReadingState = { EntitlementId: entitlementId };
  if (lastModified !== undefined) Object.assign(state, { Created: lastModified, LastModified: lastModified });
  state.StatusInfo = statusInfoFromProgress(progress, lastModified);
  state.CurrentBookmark = bookmark;
  return state;
}

/** Every timestamp of a state in Kobo's spelling, to the second. */
export function normalizeStateTimes(state: KoboReadingState): KoboReadingState {
  const fix = (value: string | undefined): string | undefined => (value === undefined ? undefined : (normalizeKoboTime(value) ?? undefined));
  const out: KoboReadingState = { ...state };
  if (out.Created !== undefined) out.Created = fix(out.Created);
  if (out.LastModified !== undefined) out.LastModified = fix(out.LastModified);
  if (out.PriorityTimestamp !== undefined) out.PriorityTimestamp = fix(out.PriorityTimestamp);
  if (out.StatusInfo?.LastModified !== undefined) out.StatusInfo = { ...out.StatusInfo, LastModified: fix(out.StatusInfo.LastModified) };
  if (out.Statistics?.LastModified !== undefined) out.Statistics = { ...out.Statistics, LastModified: fix(out.Statistics.LastModified) };
  if (out.CurrentBookmark?.LastModified !== undefined) out.CurrentBookmark = { ...out.CurrentBookmark, LastModified: fix(out.CurrentBookmark.LastModified) };
  return out;
}

/** Kobo's property order (nothing undefined), for sending a state. */
export function orderedState(state: KoboReadingState): KoboReadingState {
  const out: KoboReadingState = {};
  for (const key of ['EntitlementId', 'Created', 'LastModified', 'StatusInfo', 'Statistics', 'CurrentBookmark', 'PriorityTimestamp'] as const) {
    if (state[key] !== undefined) (out as Record<string, unknown>)[key] = state[key];
  }
  return out;
}

const isBlank = (value: string | undefined | null): boolean => value === undefined || value === null || value.trim() === '' || value.trim().toLowerCase() === 'null';

/** Whether an incoming part replaces the stored one: it must carry a time, and be newer when the stored one has one. */
function incomingNewer(incoming: string | undefined, existing: string | undefined): boolean {
  if (isBlank(incoming)) return false;
  if (isBlank(existing)) return true;
  const a = time(incoming);
  const b = time(existing);
  return a !== undefined && b !== undefined && a > b;
}

/** The latest of a state's timestamps, as its priority. */
export function priorityOf(state: KoboReadingState): string | undefined {
  const times = [state.LastModified, state.StatusInfo?.LastModified, state.Statistics?.LastModified, state.CurrentBookmark?.LastModified]
    .map((v) => parseKoboTime(v))
    .filter((d): d is Date => d !== undefined);
  if (times.length === 0) {
    const fallback = isBlank(state.PriorityTimestamp) ? state.LastModified : state.PriorityTimestamp;
    return fallback === undefined ? undefined : (normalizeKoboTime(fallback) ?? undefined);
  }
  return koboTimestamp(new Date(Math.max(...times.map((d) => d.getTime()))));
}

/** Each part (status, statistics, bookmark) is replaced only by a newer one: devices send parts out of order. */
export function mergeStates(existing: KoboReadingState, incoming: KoboReadingState): KoboReadingState {
  const pick = <T extends { LastModified?: string }>(have: T | undefined, got: T | undefined): T | undefined =>
    got !== undefined && incomingNewer(got.LastModified, have?.LastModified) ? got : have;
  const merged: KoboReadingState = {
    EntitlementId: existing.EntitlementId,
    Created: isBlank(existing.Created) ? incoming.Created : existing.Created,
    LastModified: incomingNewer(incoming.LastModified, existing.LastModified) ? incoming.LastModified : existing.LastModified,
    StatusInfo: pick(existing.StatusInfo, incoming.StatusInfo),
    Statistics: pick(existing.Statistics, incoming.Statistics),
    CurrentBookmark: pick(existing.CurrentBookmark, incoming.CurrentBookmark),
  };
  merged.PriorityTimestamp = priorityOf(merged);
  return merged;
}

/** A device's first state for a book: missing times become now (`Created`) and `Created` (`LastModified`). */
export function firstState(incoming: KoboReadingState, now: Date): KoboReadingState {
  const created = isBlank(incoming.Created) ? koboTimestamp(now) : (normalizeKoboTime(incoming.Created) ?? koboTimestamp(now));
  const lastModified = isBlank(incoming.LastModified) ? created : (normalizeKoboTime(incoming.LastModified) ?? created);
  const state = { ...incoming, Created: created, LastModified: lastModified };
  return { ...state, PriorityTimestamp: priorityOf(state) };
}

/** Parts a device sent without a time are stamped with the time of the request. */
export function stampMissingTimes(state: KoboReadingState, now: Date): KoboReadingState {
  const at = koboTimestamp(now);
  const out: KoboReadingState = { ...state };
  if (isBlank(out.PriorityTimestamp)) out.PriorityTimestamp = at;
  if (isBlank(out.LastModified)) out.LastModified = at;
  if (out.StatusInfo && isBlank(out.StatusInfo.LastModified)) out.StatusInfo = { ...out.StatusInfo, LastModified: at };
  if (out.Statistics && isBlank(out.Statistics.LastModified)) out.Statistics = { ...out.Statistics, LastModified: at };
  if (out.CurrentBookmark && isBlank(out.CurrentBookmark.LastModified)) out.CurrentBookmark = { ...out.CurrentBookmark, LastModified: at };
  return out;
}

/** The read status a Kobo percent implies under the user's thresholds. */
export function statusFromKoboPercent(percent: number, thresholds: Thresholds): 'READ' | 'READING' | 'UNREAD' {
  if (percent >= thresholds.finished) return 'READ';
  if (percent >= thresholds.reading) return 'READING';
  return 'UNREAD';
}

/** A status can only be sent to a device after it was set in Bindery; until then (and for 10 s after) the device does not override it. */
export const STATUS_SYNC_BUFFER_MS = 10_000;

/** Whether a status set in Bindery should survive a progress report from the device arriving at `at`. */
export function keepsBinderyStatus(progress: Pick<ProgressForKobo, 'read_status_modified_time' | 'kobo_status_sent_time'>, at: Date): boolean {
  const modified = time(progress.read_status_modified_time);
  if (modified === undefined) return false;
  const sent = time(progress.kobo_status_sent_time);
  if (sent === undefined || modified > sent) return true;
  return at.getTime() < sent + STATUS_SYNC_BUFFER_MS;
}

/** Parses a device's state object defensively: unknown properties are dropped, wrong types read as absent. */
export function parseDeviceState(value: unknown): KoboReadingState | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  const str = (x: unknown): string | undefined => (typeof x === 'string' ? x : undefined);
  const int = (x: unknown): number | undefined => (typeof x === 'number' && Number.isFinite(x) ? Math.round(x) : undefined);
  const obj = (x: unknown): Record<string, unknown> | undefined => (typeof x === 'object' && x !== null && !Array.isArray(x) ? (x as Record<string, unknown>) : undefined);
  const clean = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, x]) => x !== undefined)) as T;
  const state: KoboReadingState = clean({
    EntitlementId: str(v.EntitlementId) ?? (typeof v.EntitlementId === 'number' ? String(v.EntitlementId) : undefined),
    Created: str(v.Created),
    LastModified: str(v.LastModified),
    PriorityTimestamp: str(v.PriorityTimestamp),
  });
  const status = obj(v.StatusInfo);
  if (status) {
    state.StatusInfo = clean({
      LastModified: str(status.LastModified),
      Status: str(status.Status),
      TimesStartedReading: int(status.TimesStartedReading),
      LastTimeStartedReading: str(status.LastTimeStartedReading),
      LastTimeFinished: str(status.LastTimeFinished),
    });
  }
  const stats = obj(v.Statistics);
  if (stats) state.Statistics = clean({ LastModified: str(stats.LastModified), SpentReadingMinutes: int(stats.SpentReadingMinutes), RemainingTimeMinutes: int(stats.RemainingTimeMinutes) });
  const mark = obj(v.CurrentBookmark);
  if (mark) {
    const location = obj(mark.Location);
    state.CurrentBookmark = clean({
      LastModified: str(mark.LastModified),
      ProgressPercent: int(mark.ProgressPercent),
      ContentSourceProgressPercent: int(mark.ContentSourceProgressPercent),
      Location: location ? clean({ Value: str(location.Value), Type: str(location.Type), Source: str(location.Source) }) : undefined,
    });
  }
  return state;
}

// Read-status rules of the web/app reader: how a progress percent turns into UNREAD / READING / READ.

export const READ_STATUSES = ['UNREAD', 'READING', 'RE_READING', 'READ', 'PARTIALLY_READ', 'PAUSED', 'WONT_READ', 'ABANDONED', 'UNSET'] as const;
export type ReadStatus = (typeof READ_STATUSES)[number];

/** At or above this percent a book counts as read. */
export const READ_THRESHOLD = 99.5;
/** Above this percent (strictly) a book counts as being read. */
export const READING_THRESHOLD = 0.1;

/** Statuses that show the reader engaged with the book; progress near zero never demotes them to UNREAD. */
const ENGAGED: ReadonlySet<string> = new Set(['READING', 'RE_READING', 'READ', 'PARTIALLY_READ', 'PAUSED', 'ABANDONED', 'WONT_READ']);

// Grimmory computes in 32-bit floats; doing the same keeps the edge values (99.5, 0.1, x.x5) on the same side.
const f32 = Math.fround;

/** Percentages are kept to one decimal, rounding halves up. */
export function roundPercent(percent: number): number {
  return Math.round(f32(f32(percent) * 10)) / 10;
}

/** The status a progress update leads to, given the status the book has now (null when it has none). */
export function statusAfterProgress(percent: number, current: string | null): string {
  const p = f32(percent);
  const computed: ReadStatus = p >= f32(READ_THRESHOLD) ? 'READ' : p > f32(READING_THRESHOLD) ? 'READING' : 'UNREAD';
  if (computed === 'UNREAD' && current !== null && ENGAGED.has(current)) return current;
  return computed;
}

/** A status name as a client may send it (any letter case), or undefined when it names no status. */
export function parseReadStatus(name: string): ReadStatus | undefined {
  const upper = name.toUpperCase();
  return READ_STATUSES.find((s) => s === upper);
}

/** How a stored status is reported in `Book.readStatus`: a row without one reads as UNSET. */
export function reportedStatus(stored: string | null): string {
  return stored ?? 'UNSET';
}

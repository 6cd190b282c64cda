// What each kind of progress reset clears.
import type { UserBookProgressTable } from '../store/db-types.ts';

export const RESET_TYPES = ['BOOKLORE', 'KOREADER', 'KOBO'] as const;
export type ResetType = (typeof RESET_TYPES)[number];

type ProgressColumn = keyof UserBookProgressTable;

/** Columns of `user_book_progress` a reset sets to NULL. Personal rating and the other sources' columns stay. */
export const RESET_COLUMNS: Record<ResetType, readonly ProgressColumn[]> = {
  BOOKLORE: ['read_status', 'last_read_time', 'date_finished', 'pdf_progress', 'pdf_progress_percent', 'epub_progress', 'epub_progress_percent', 'cbx_progress', 'cbx_progress_percent'],
  KOREADER: ['koreader_progress', 'koreader_progress_percent', 'koreader_device', 'koreader_device_id', 'koreader_last_sync_time'],
  KOBO: ['kobo_progress_percent', 'kobo_location', 'kobo_location_type', 'kobo_location_source', 'kobo_progress_received_time'],
};

/** A Bindery reset also stamps the status change; the device resets leave the status alone. */
export function stampsStatusChange(type: ResetType): boolean {
  return type === 'BOOKLORE';
}

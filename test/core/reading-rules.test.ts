import { describe, expect, it } from 'vitest';
import { allPermissions, PERMISSION_NAMES, type Permissions } from '../../src/core/auth/permissions.ts';
import { missingBulkPermission, permissionDeniedMessage } from '../../src/core/reading/bulk-permissions.ts';
import { isValidRating } from '../../src/core/reading/personal-rating.ts';
import { parseReadStatus, reportedStatus, roundPercent, statusAfterProgress } from '../../src/core/reading/read-status.ts';
import { RESET_COLUMNS, stampsStatusChange } from '../../src/core/reading/reset-types.ts';

const none = (): Permissions => Object.fromEntries(PERMISSION_NAMES.map((p) => [p, false])) as Permissions;

describe('read status from progress', () => {
  it('moves UNREAD → READING → READ at the thresholds, with 0.1 still unread and 99.5 already read', () => {
    expect(statusAfterProgress(0, null)).toBe('UNREAD');
    expect(statusAfterProgress(0.1, null)).toBe('UNREAD');
    expect(statusAfterProgress(0.11, null)).toBe('READING');
    expect(statusAfterProgress(50, 'UNREAD')).toBe('READING');
    expect(statusAfterProgress(99.4, 'READING')).toBe('READING');
    expect(statusAfterProgress(99.49, 'READING')).toBe('READING');
    expect(statusAfterProgress(99.5, 'READING')).toBe('READ');
    expect(statusAfterProgress(100, null)).toBe('READ');
  });

  it('never demotes an engaged status to UNREAD, but does move READ back to READING', () => {
    for (const kept of ['READING', 'RE_READING', 'READ', 'PARTIALLY_READ', 'PAUSED', 'ABANDONED', 'WONT_READ']) {
      expect(statusAfterProgress(0, kept)).toBe(kept);
    }
    expect(statusAfterProgress(0, 'UNSET')).toBe('UNREAD');
    expect(statusAfterProgress(0.05, 'UNREAD')).toBe('UNREAD');
    expect(statusAfterProgress(40, 'READ')).toBe('READING');
    expect(statusAfterProgress(40, 'WONT_READ')).toBe('READING');
  });

  it('rounds percentages to one decimal the way 32-bit float arithmetic does', () => {
    expect(roundPercent(45.67)).toBe(45.7);
    expect(roundPercent(45.64)).toBe(45.6);
    expect(roundPercent(12.35)).toBe(12.4);
    expect(roundPercent(99.95)).toBe(100);
    expect(roundPercent(0)).toBe(0);
  });

  it('parses status names in any letter case and reports a missing status as UNSET', () => {
    expect(parseReadStatus('read')).toBe('READ');
    expect(parseReadStatus('Re_Reading')).toBe('RE_READING');
    expect(parseReadStatus('finished')).toBeUndefined();
    expect(reportedStatus(null)).toBe('UNSET');
    expect(reportedStatus('PAUSED')).toBe('PAUSED');
  });
});

describe('bulk permissions', () => {
  it('lets anyone act on one book and asks the dedicated flag for more, even of admins', () => {
    const admin = { ...none(), admin: true };
    expect(missingBulkPermission(none(), 'STATUS', 1)).toBeUndefined();
    expect(missingBulkPermission(admin, 'STATUS', 2)).toBe('canBulkResetBookReadStatus');
    expect(missingBulkPermission(admin, 'BOOKLORE', 3)).toBe('canBulkResetBookloreReadProgress');
    expect(missingBulkPermission(admin, 'KOREADER', 3)).toBe('canBulkResetKoReaderReadProgress');
    expect(missingBulkPermission(none(), 'KOBO', 3)).toBeUndefined();
    expect(missingBulkPermission(allPermissions(), 'STATUS', 50)).toBeUndefined();
    expect(missingBulkPermission({ ...none(), canBulkResetBookReadStatus: true }, 'BOOKLORE', 2)).toBe('canBulkResetBookloreReadProgress');
    expect(permissionDeniedMessage('canBulkResetBookReadStatus')).toBe('Permission denied: Bulk reset book read status');
  });
});

describe('reset types', () => {
  it('clears only its own source and leaves rating, EPUB href and the other devices alone', () => {
    expect(RESET_COLUMNS.BOOKLORE).toEqual(expect.arrayContaining(['read_status', 'last_read_time', 'date_finished', 'epub_progress', 'epub_progress_percent', 'pdf_progress', 'cbx_progress_percent']));
    expect(RESET_COLUMNS.BOOKLORE).not.toContain('personal_rating');
    expect(RESET_COLUMNS.BOOKLORE).not.toContain('epub_progress_href');
    expect(RESET_COLUMNS.BOOKLORE.some((c) => c.startsWith('koreader') || c.startsWith('kobo'))).toBe(false);
    expect(RESET_COLUMNS.KOREADER.every((c) => c.startsWith('koreader_'))).toBe(true);
    expect(RESET_COLUMNS.KOBO).not.toContain('kobo_status_sent_time');
    expect(RESET_COLUMNS.KOBO.every((c) => c.startsWith('kobo_'))).toBe(true);
    expect([stampsStatusChange('BOOKLORE'), stampsStatusChange('KOREADER'), stampsStatusChange('KOBO')]).toEqual([true, false, false]);
  });
});

describe('personal rating', () => {
  it('accepts whole numbers 0..10 and null', () => {
    expect([0, 1, 10, null].every(isValidRating)).toBe(true);
    expect([-1, 11, 5.5, Number.NaN].some(isValidRating)).toBe(false);
  });
});

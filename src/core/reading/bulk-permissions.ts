// Changing reading state of several books at once needs a dedicated flag; admin alone does not grant it.
import type { Permission, Permissions } from '../auth/permissions.ts';
import type { ResetType } from './reset-types.ts';

export type BulkOperation = 'STATUS' | ResetType;

const BULK_FLAG: Record<BulkOperation, Permission | undefined> = {
  STATUS: 'canBulkResetBookReadStatus',
  BOOKLORE: 'canBulkResetBookloreReadProgress',
  KOREADER: 'canBulkResetKoReaderReadProgress',
  KOBO: undefined,
};

/** How Grimmory names each flag in its "Permission denied: <description>" message. */
const DESCRIPTION: Partial<Record<Permission, string>> = {
  canBulkResetBookloreReadProgress: 'Bulk reset Booklore read progress',
  canBulkResetKoReaderReadProgress: 'Bulk reset KoReader read progress',
  canBulkResetBookReadStatus: 'Bulk reset book read status',
};

/** The flag the caller lacks for this operation over `count` books, or undefined when they may go ahead. */
export function missingBulkPermission(permissions: Permissions, operation: BulkOperation, count: number): Permission | undefined {
  const flag = BULK_FLAG[operation];
  if (count <= 1 || flag === undefined || permissions[flag]) return undefined;
  return flag;
}

export function permissionDeniedMessage(flag: Permission): string {
  return `Permission denied: ${DESCRIPTION[flag] ?? flag}`;
}

// The permission flags, in their three spellings: wire JSON, entity/register-request name, and catalog column.
export const PERMISSIONS = [
  ['admin', 'permissionAdmin', 'permission_admin'],
  ['canUpload', 'permissionUpload', 'permission_upload'],
  ['canDownload', 'permissionDownload', 'permission_download'],
  ['canEditMetadata', 'permissionEditMetadata', 'permission_edit_metadata'],
  ['canManageLibrary', 'permissionManageLibrary', 'permission_manipulate_library'],
  ['canSyncKoReader', 'permissionSyncKoreader', 'permission_sync_koreader'],
  ['canSyncKobo', 'permissionSyncKobo', 'permission_sync_kobo'],
  ['canEmailBook', 'permissionEmailBook', 'permission_email_book'],
  ['canDeleteBook', 'permissionDeleteBook', 'permission_delete_book'],
  ['canAccessOpds', 'permissionAccessOpds', 'permission_access_opds'],
  ['canManageMetadataConfig', 'permissionManageMetadataConfig', 'permission_manage_metadata_config'],
  ['canAccessBookdrop', 'permissionAccessBookdrop', 'permission_access_bookdrop'],
  ['canAccessLibraryStats', 'permissionAccessLibraryStats', 'permission_access_library_stats'],
  ['canAccessUserStats', 'permissionAccessUserStats', 'permission_access_user_stats'],
  ['canAccessTaskManager', 'permissionAccessTaskManager', 'permission_access_task_manager'],
  ['canManageGlobalPreferences', 'permissionManageGlobalPreferences', 'permission_manage_global_preferences'],
  ['canManageIcons', 'permissionManageIcons', 'permission_manage_icons'],
  ['canManageFonts', 'permissionManageFonts', 'permission_manage_fonts'],
  ['demoUser', 'permissionDemoUser', 'permission_demo_user'],
  ['canBulkAutoFetchMetadata', 'permissionBulkAutoFetchMetadata', 'permission_bulk_auto_fetch_metadata'],
  ['canBulkCustomFetchMetadata', 'permissionBulkCustomFetchMetadata', 'permission_bulk_custom_fetch_metadata'],
  ['canBulkEditMetadata', 'permissionBulkEditMetadata', 'permission_bulk_edit_metadata'],
  ['canBulkRegenerateCover', 'permissionBulkRegenerateCover', 'permission_bulk_regenerate_cover'],
  ['canMoveOrganizeFiles', 'permissionMoveOrganizeFiles', 'permission_move_organize_files'],
  ['canBulkLockUnlockMetadata', 'permissionBulkLockUnlockMetadata', 'permission_bulk_lock_unlock_metadata'],
  ['canBulkResetBookloreReadProgress', 'permissionBulkResetBookloreReadProgress', 'permission_bulk_reset_booklore_read_progress'],
  ['canBulkResetKoReaderReadProgress', 'permissionBulkResetKoReaderReadProgress', 'permission_bulk_reset_koreader_read_progress'],
  ['canBulkResetBookReadStatus', 'permissionBulkResetBookReadStatus', 'permission_bulk_reset_book_read_status'],
] as const;

export type Permission = (typeof PERMISSIONS)[number][0];
export type PermissionColumn = (typeof PERMISSIONS)[number][2];
export type Permissions = Record<Permission, boolean>;

export const PERMISSION_NAMES: readonly Permission[] = PERMISSIONS.map(([json]) => json);

export function permissionsFromRow(row: Partial<Record<PermissionColumn, number | null>>): Permissions {
  return Object.fromEntries(PERMISSIONS.map(([json, , column]) => [json, row[column] === 1])) as Permissions;
}

export function rowFromPermissions(perms: Partial<Permissions>): Partial<Record<PermissionColumn, number>> {
  const out: Partial<Record<PermissionColumn, number>> = {};
  for (const [json, , column] of PERMISSIONS) if (perms[json] !== undefined) out[column] = perms[json] ? 1 : 0;
  return out;
}

/** Every flag on: what the setup admin gets. */
export function allPermissions(): Permissions {
  return Object.fromEntries(PERMISSION_NAMES.map((p) => [p, p !== 'demoUser'])) as Permissions;
}

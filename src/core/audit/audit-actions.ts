// Grimmory's AuditAction values (enums.md): what an audit log row says happened.
export const AUDIT_ACTIONS = [
  'LOGIN_SUCCESS',
  'LOGIN_FAILED',
  'USER_CREATED',
  'USER_UPDATED',
  'USER_DELETED',
  'PASSWORD_CHANGED',
  'PERMISSIONS_CHANGED',
  'LIBRARY_CREATED',
  'LIBRARY_UPDATED',
  'LIBRARY_DELETED',
  'LIBRARY_SCANNED',
  'BOOK_UPLOADED',
  'BOOK_DELETED',
  'BOOK_SENT',
  'METADATA_UPDATED',
  'SETTINGS_UPDATED',
  'OIDC_CONFIG_CHANGED',
  'TASK_EXECUTED',
  'SHELF_CREATED',
  'SHELF_UPDATED',
  'SHELF_DELETED',
  'MAGIC_SHELF_CREATED',
  'MAGIC_SHELF_UPDATED',
  'MAGIC_SHELF_DELETED',
  'EMAIL_PROVIDER_CREATED',
  'EMAIL_PROVIDER_UPDATED',
  'EMAIL_PROVIDER_DELETED',
  'OPDS_USER_CREATED',
  'OPDS_USER_DELETED',
  'OPDS_USER_UPDATED',
  'NAMING_PATTERN_CHANGED',
  'LOGIN_RATE_LIMITED',
  'REFRESH_RATE_LIMITED',
  'DUPLICATE_BOOKS_MERGED',
  'BOOK_FILE_DETACHED',
  'AUTHOR_METADATA_UPDATED',
  'AUTHOR_DELETED',
  'LOGOUT',
  'BACKCHANNEL_LOGOUT',
  'OIDC_GROUP_MAPPING_CREATED',
  'OIDC_GROUP_MAPPING_UPDATED',
  'OIDC_GROUP_MAPPING_DELETED',
  'OIDC_CONNECTION_TEST',
  'OIDC_FORCE_ONLY_MODE_CHANGED',
  'OIDC_LOGIN_SUCCESS',
  'OIDC_LOGIN_FAILED',
  'OIDC_USER_PROVISIONED',
  'OIDC_ACCOUNT_LINKED',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export function isAuditAction(value: string): value is AuditAction {
  return (AUDIT_ACTIONS as readonly string[]).includes(value);
}

/** The action a change of one application setting is logged as, by the setting's AppSettingKey constant name. */
export function settingAuditAction(settingName: string): AuditAction {
  if (settingName === 'OIDC_FORCE_ONLY_MODE') return 'OIDC_FORCE_ONLY_MODE_CHANGED';
  if (settingName.startsWith('OIDC_')) return 'OIDC_CONFIG_CHANGED';
  return 'SETTINGS_UPDATED';
}

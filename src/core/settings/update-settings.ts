// Changing application settings: each change names a key by its constant, carries a value of that key's type,
// and needs one of the key's permissions. A batch is checked whole, then written whole.
import { hasAny, type Principal } from '../auth/principal.ts';
import type { Db } from '../store/store.ts';
import { loadAppSettings } from './app-settings.ts';
import type { SettingsEnvironment } from './environment.ts';
import { settingKeyNamed, type SettingKey } from './setting-keys.ts';
import { check, conform } from './shape.ts';

export interface SettingChange {
  name: string;
  value: unknown;
}

export type SettingsErrorCode = 'UNKNOWN_KEY' | 'FORBIDDEN' | 'INVALID';

export class SettingsError extends Error {
  override name = 'SettingsError';
  readonly code: SettingsErrorCode;
  readonly details: string[] | undefined;
  constructor(code: SettingsErrorCode, message: string, details?: string[]) {
    super(message);
    this.code = code;
    this.details = details;
  }
}

const invalid = (message: string, details?: string[]): SettingsError => new SettingsError('INVALID', message, details);

/** The text stored for a value of this key (NULL for null), or a SettingsError when the value has the wrong type. */
export function serializeSetting(key: SettingKey, value: unknown): string | null {
  const v = key.value;
  if (value === null || value === undefined) {
    if (v.kind === 'integer' && v.initial !== null) throw invalid(`${key.name} must be a whole number`);
    return null;
  }
  switch (v.kind) {
    case 'json': {
      const problems = check(v.shape, value, '');
      if (problems.length > 0) throw invalid(`Invalid value for ${key.name}`, problems);
      return JSON.stringify(conform(v.shape, value));
    }
    case 'boolean':
      if (typeof value === 'boolean') return String(value);
      if (typeof value === 'string' && /^(true|false)$/i.test(value.trim())) return value.trim().toLowerCase();
      throw invalid(`${key.name} must be true or false`);
    case 'integer':
      if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
      if (typeof value === 'string' && /^-?\d{1,15}$/.test(value.trim())) return String(Number(value.trim()));
      throw invalid(`${key.name} must be a whole number`);
    case 'string':
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
      throw invalid(`${key.name} must be a string`);
  }
}

const WILDCARD_REDIRECT_URI = '*';

/** The mobile app's OIDC redirect URIs: strings with a custom (non-web) scheme, no fragment, no repeats; `*` only alone. */
export function normalizeRedirectUris(value: unknown): string[] {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value)) throw invalid('OIDC redirect URIs must be an array');
  const uris = value.map((item: unknown) => {
    if (item === null || item === undefined) return null;
    if (typeof item !== 'string') throw invalid('OIDC redirect URIs must be an array of strings');
    return item.trim();
  });
  if (uris.includes(WILDCARD_REDIRECT_URI) && uris.length > 1) throw invalid('Wildcard redirect URI must be the only value');
  const unique: string[] = [];
  for (const uri of uris) {
    if (uri === null || uri === '') throw invalid('Redirect URI cannot be blank');
    if (uri !== WILDCARD_REDIRECT_URI) checkMobileRedirectUri(uri);
    if (unique.includes(uri)) throw invalid(`Duplicate redirect URI: ${uri}`);
    unique.push(uri);
  }
  return unique;
}

function checkMobileRedirectUri(uri: string): void {
  if (/[\s<>"{}|\\^`]/.test(uri) || (uri.match(/#/g) ?? []).length > 1) throw invalid(`Redirect URI is not a valid URI: ${uri}`);
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(uri)?.[1];
  if (!scheme) throw invalid('Redirect URI must include a scheme');
  if (/^https?$/i.test(scheme)) throw invalid('Redirect URI must use a custom mobile scheme');
  if (uri.includes('#')) throw invalid('Redirect URI must not contain a fragment');
}

/** OIDC-only mode locks out local logins, so it needs a working OIDC configuration first. */
async function checkForceOnlyMode(db: Db, env: SettingsEnvironment, value: unknown): Promise<void> {
  if (String(value).trim().toLowerCase() !== 'true') return;
  const current = await loadAppSettings(db, env);
  if (current.oidcEnabled !== true) throw invalid('Cannot enable OIDC-only mode: OIDC must be enabled first');
  const details = current.oidcProviderDetails as { issuerUri?: string | null; clientId?: string | null } | null;
  if (!details?.issuerUri?.trim() || !details.clientId?.trim()) throw invalid('Cannot enable OIDC-only mode: OIDC must be configured with issuer URI and client ID');
}

async function store(db: Db, dbKey: string, val: string | null): Promise<void> {
  await db.insertInto('app_settings').values({ name: dbKey, val }).onConflict((oc) => oc.column('name').doUpdateSet({ val })).execute();
}

/**
 * Applies the changes in order, in one transaction: an unknown key, a missing permission or a bad value
 * rejects the whole batch. A change may rely on an earlier one of the same batch (enable OIDC, then OIDC-only mode).
 */
export async function updateSettings(db: Db, principal: Principal, changes: readonly SettingChange[], env: SettingsEnvironment): Promise<void> {
  const planned = changes.map((change) => {
    const key = settingKeyNamed(change.name);
    if (!key) throw new SettingsError('UNKNOWN_KEY', `Unknown setting key: ${change.name}`);
    if (key.changeableBy.length > 0 && !hasAny(principal, key.changeableBy)) throw new SettingsError('FORBIDDEN', 'Access denied.');
    const value = key.name === 'OIDC_REDIRECT_URIS' ? normalizeRedirectUris(change.value) : change.value;
    return { key, value, text: serializeSetting(key, value) };
  });
  await db.transaction().execute(async (trx) => {
    for (const { key, value, text } of planned) {
      if (key.name === 'OIDC_FORCE_ONLY_MODE') await checkForceOnlyMode(trx, env, value);
      await store(trx, key.dbKey, text);
    }
  });
}

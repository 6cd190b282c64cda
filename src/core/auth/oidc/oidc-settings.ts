// The OIDC part of the application settings, typed, as the sign-in reads them (the environment's force-off applied).
import { loadAppSettings } from '../../settings/app-settings.ts';
import type { SettingsEnvironment } from '../../settings/environment.ts';
import type { Db } from '../../store/store.ts';

export interface ClaimMapping {
  username: string | null;
  name: string | null;
  email: string | null;
  groups: string | null;
}

export interface OidcProvider {
  issuerUri: string;
  clientId: string;
  clientSecret: string | null;
  scopes: string | null;
  claimMapping: ClaimMapping;
}

export interface AutoProvisioning {
  enabled: boolean;
  allowLocalAccountLinking: boolean;
  /** Entity-style names (`permissionUpload`...). */
  defaultPermissions: string[];
  defaultLibraryIds: number[];
}

export type GroupSyncMode = 'DISABLED' | 'ON_LOGIN' | 'ON_LOGIN_ADDITIVE';

export interface OidcSettings {
  enabled: boolean;
  /** Undefined when no issuer or client id is set. */
  provider: OidcProvider | undefined;
  autoProvisioning: AutoProvisioning;
  /** Lifetime of the refresh token issued at an OIDC sign-in; undefined: the standard 30 days. */
  sessionDurationHours: number | undefined;
  groupSyncMode: GroupSyncMode;
  /** The mobile apps' redirect URIs (custom schemes), or `*` for any. */
  redirectUris: string[];
}

type Json = Record<string, unknown>;

const text = (value: unknown): string | null => (typeof value === 'string' && value.trim() !== '' ? value : null);
const record = (value: unknown): Json => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {});
const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);

function providerOf(value: unknown): OidcProvider | undefined {
  const details = record(value);
  const issuerUri = text(details.issuerUri);
  const clientId = text(details.clientId);
  if (!issuerUri || !clientId) return undefined;
  const mapping = record(details.claimMapping);
  return {
    issuerUri: issuerUri.trim(),
    clientId: clientId.trim(),
    clientSecret: text(details.clientSecret),
    scopes: text(details.scopes),
    claimMapping: { username: text(mapping.username), name: text(mapping.name), email: text(mapping.email), groups: text(mapping.groups) },
  };
}

function autoProvisioningOf(value: unknown): AutoProvisioning {
  const details = record(value);
  return {
    enabled: details.enableAutoProvisioning === true,
    // Grimmory's default for this flag is on.
    allowLocalAccountLinking: details.allowLocalAccountLinking !== false,
    defaultPermissions: strings(details.defaultPermissions),
    defaultLibraryIds: Array.isArray(details.defaultLibraryIds) ? details.defaultLibraryIds.filter((id): id is number => Number.isInteger(id)) : [],
  };
}

function groupSyncModeOf(value: unknown): GroupSyncMode {
  return value === 'ON_LOGIN' || value === 'ON_LOGIN_ADDITIVE' ? value : 'DISABLED';
}

export async function loadOidcSettings(db: Db, env: SettingsEnvironment): Promise<OidcSettings> {
  const all = await loadAppSettings(db, env);
  const hours = all.oidcSessionDurationHours;
  return {
    enabled: all.oidcEnabled === true,
    provider: providerOf(all.oidcProviderDetails),
    autoProvisioning: autoProvisioningOf(all.oidcAutoProvisionDetails),
    sessionDurationHours: typeof hours === 'number' && Number.isInteger(hours) && hours > 0 ? hours : undefined,
    groupSyncMode: groupSyncModeOf(all.oidcGroupSyncMode),
    redirectUris: strings(all.oidcRedirectUris),
  };
}

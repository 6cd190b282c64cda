// An OIDC sign-in from the code the client brings back to the tokens Bindery issues: the checks Grimmory makes in
// its order (switched on, configured, redirect URI allowed), the code exchange, the account (found, linked or
// provisioned), its groups applied, the provider session recorded, and the same token pair a password login gets.
import type { SettingsEnvironment } from '../../settings/environment.ts';
import type { Db } from '../../store/store.ts';
import type { LoginResult } from '../login.ts';
import { issueTokens } from '../refresh-tokens.ts';
import { identityFrom } from './claims.ts';
import { exchangeCode, type CodeGrant } from './code-exchange.ts';
import { providerClient } from './discovery.ts';
import { syncUserGroups } from './group-sync.ts';
import { oidcDisabled, oidcNotConfigured } from './oidc-error.ts';
import { recordSession } from './oidc-sessions.ts';
import { loadOidcSettings, type OidcProvider, type OidcSettings } from './oidc-settings.ts';
import { findOrProvisionAccount, type OidcAccount } from './provisioning.ts';
import { checkRedirectUri } from './redirect-uris.ts';

export interface OidcDeps {
  db: Db;
  /** Bindery's token signing secret. */
  secret: Uint8Array;
  env: SettingsEnvironment;
  /** The outgoing client's allow list; the provider's own hosts are added to it. */
  allowPrivateHosts: readonly string[];
}

export interface OidcSignIn extends CodeGrant {
  /** Origin of the request (its Origin header, else the address it was made to); web redirect URIs must match it. */
  requestOrigin: string | undefined;
}

export interface OidcLoginResult extends LoginResult {
  account: OidcAccount;
}

/** The settings, when OIDC is on and has a provider; Grimmory's 403s otherwise. */
export async function activeOidcSettings(deps: Pick<OidcDeps, 'db' | 'env'>): Promise<OidcSettings & { provider: OidcProvider }> {
  const settings = await loadOidcSettings(deps.db, deps.env);
  if (!settings.enabled) throw oidcDisabled();
  if (!settings.provider) throw oidcNotConfigured();
  return settings as OidcSettings & { provider: OidcProvider };
}

export async function loginWithOidc(deps: OidcDeps, input: OidcSignIn): Promise<OidcLoginResult> {
  const settings = await activeOidcSettings(deps);
  const provider = settings.provider;
  checkRedirectUri(input.redirectUri, settings.redirectUris, input.requestOrigin);

  const client = await providerClient(provider, deps.allowPrivateHosts);
  const tokens = await exchangeCode(client, input);
  const who = identityFrom(tokens.claims, tokens.userInfo, provider.claimMapping);
  // Users are keyed by the issuer as configured, as Grimmory keys them.
  const account = await findOrProvisionAccount(deps.db, who, provider.issuerUri, settings.autoProvisioning);
  await syncUserGroups(deps.db, account.id, who.groups, settings.groupSyncMode);
  await recordSession(deps.db, { userId: account.id, subject: who.subject, issuer: provider.issuerUri, sessionId: who.sessionId, idToken: tokens.idToken });

  const lifetime = settings.sessionDurationHours === undefined ? undefined : settings.sessionDurationHours * 3600;
  const issued = await issueTokens(deps.db, deps.secret, account.id, lifetime);
  return { ...issued, isDefaultPassword: account.isDefaultPassword, account };
}

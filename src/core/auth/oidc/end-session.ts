// The provider's end-session URL that POST /api/v1/auth/logout hands an OIDC user, so the web UI can sign them out at
// the provider too. Only for OIDC-provisioned users while OIDC is on, with a live provider session; else null.
import type { OidcDeps } from './oidc-login.ts';
import { latestSession, revokeSessions } from './oidc-sessions.ts';
import { loadOidcSettings } from './oidc-settings.ts';

/** The URL to send the browser to, or null; the session it names is marked ended. Never throws. */
export async function endSessionUrl(deps: OidcDeps, userId: number, origin: string | undefined): Promise<string | null> {
  try {
    const user = await deps.db.selectFrom('users').select('provisioning_method').where('id', '=', userId).executeTakeFirst();
    if (user?.provisioning_method !== 'OIDC') return null;
    const settings = await loadOidcSettings(deps.db, deps.env);
    if (!settings.enabled || !settings.provider) return null;
    const session = await latestSession(deps.db, userId);
    if (!session) return null;
    await revokeSessions(deps.db, [session.id]);
    // openid-client loads only when someone signed in with OIDC logs out.
    const [client, { providerClient }] = await Promise.all([import('openid-client'), import('./discovery.ts')]);
    const provider = await providerClient(settings.provider, deps.allowPrivateHosts);
    if (!provider.metadata.end_session_endpoint) return null;
    const parameters: Record<string, string> = { client_id: settings.provider.clientId };
    if (session.idTokenHint) parameters.id_token_hint = session.idTokenHint;
    const base = origin?.trim().replace(/\/+$/, '');
    if (base) parameters.post_logout_redirect_uri = `${base}/login`;
    return client.buildEndSessionUrl(provider.config, parameters).href;
  } catch {
    return null;
  }
}

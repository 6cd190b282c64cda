// A real OpenID Provider (oidc-provider) on 127.0.0.1 for the OIDC sign-in tests, with a browser stand-in: the
// authorization request is followed through the provider's redirects, the login interaction is finished in code for
// whichever account the test names, consent is implied, and the user lands on the client's redirect URI with a code.
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import Provider, { type ProviderContext } from 'oidc-provider';

export interface TestAccount {
  sub: string;
  preferred_username?: string;
  email?: string;
  name?: string;
  picture?: string;
  groups?: string[];
}

export interface TestClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
  backchannel_logout_uri?: string;
}

export interface AuthorizationResult {
  /** Where the provider sent the browser: the client's redirect URI with `code`, `state` and `iss`. */
  url: URL;
  code: string;
  codeVerifier: string;
  nonce: string;
}

export interface TestProvider {
  issuer: string;
  provider: Provider;
  accounts: Map<string, TestAccount>;
  /** Signs a token with the provider's own key (for logout tokens the provider would not send on its own). */
  sign(claims: Record<string, unknown>, typ?: string): Promise<string>;
  /** Runs the authorization request as a browser would, logged in as `accountId`, and returns the code. */
  authorize(params: { clientId: string; redirectUri: string; state: string; scope?: string; accountId: string }): Promise<AuthorizationResult>;
  /** Signs the account out at the provider (RP-initiated logout), which sends back-channel logout tokens. */
  logout(idTokenHint: string): Promise<void>;
  /** Outcomes of the provider's back-channel deliveries, in order. */
  backchannel: { ok: boolean; error?: string }[];
  close(): Promise<void>;
}

class CookieJar {
  private readonly cookies = new Map<string, string>();
  store(headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attributes.some((a) => /^\s*expires=.*1970/i.test(a)) || value === '';
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

const base64url = (bytes: Buffer): string => bytes.toString('base64url');

export async function startTestProvider(options: { clients: TestClient[]; accounts: TestAccount[] }): Promise<TestProvider> {
  const accounts = new Map(options.accounts.map((a) => [a.sub, a]));
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
  let loginAs: string | undefined;
  const backchannel: TestProvider['backchannel'] = [];

  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const provider = new Provider(issuer, {
    clients: options.clients.map((c) => ({
      ...c,
      application_type: 'native',
      token_endpoint_auth_method: 'client_secret_post',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      ...(c.backchannel_logout_uri ? { backchannel_logout_session_required: true } : {}),
    })),
    jwks: { keys: [jwk] },
    ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 3600, IdToken: 600, Interaction: 600, Session: 3600 },
    cookies: { keys: ['oidc-test-cookie-key'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'preferred_username', 'picture'], groups: ['groups'] },
    scopes: ['openid', 'offline_access', 'email', 'profile', 'groups'],
    pkce: { required: () => true },
    // The provider refuses loopback addresses for its own requests (back-channel logout); Bindery is on one here.
    fetch: (url: string, init: RequestInit & { dispatcher?: unknown }) => {
      const { dispatcher: _ssrfGuard, ...rest } = init;
      return fetch(url, rest);
    },
    features: {
      devInteractions: { enabled: false },
      backchannelLogout: { enabled: true },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: (ctx: ProviderContext, form: string) => {
          ctx.type = 'html';
          ctx.body = `<!DOCTYPE html><html><body>${form}</body></html>`;
        },
      },
    },
    findAccount: (_ctx: unknown, sub: string) => {
      const account = accounts.get(sub);
      return account ? { accountId: sub, claims: () => ({ ...account, email_verified: true }) } : undefined;
    },
    renderError: (ctx: ProviderContext, out: Record<string, string>) => {
      ctx.type = 'json';
      ctx.body = out;
    },
  });
  provider.on('backchannel.success', () => backchannel.push({ ok: true }));
  provider.on('backchannel.error', (_ctx, error) => backchannel.push({ ok: false, error: String(error) }));

  const handle = provider.callback();
  server.on('request', (req, res) => {
    if (req.url?.startsWith('/interaction/')) {
      const account = loginAs;
      void (async () => {
        try {
          const details = await provider.interactionDetails(req, res);
          if (details.prompt.name === 'login') {
            await provider.interactionFinished(req, res, { login: { accountId: account } }, { mergeWithLastSubmission: false });
            return;
          }
          // Native clients are always asked for consent: the user grants every scope asked for.
          const grant = new provider.Grant({ clientId: String(details.params.client_id), accountId: String(details.session?.accountId) });
          grant.addOIDCScope(String(details.params.scope));
          await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
        } catch (error) {
          res.statusCode = 500;
          res.end(String(error));
        }
      })();
      return;
    }
    handle(req, res);
  });

  async function browse(url: string, jar: CookieJar, init: RequestInit = {}): Promise<Response> {
    const response = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), cookie: jar.header() } });
    jar.store(response.headers);
    return response;
  }

  /** Each sign-in is a fresh browser; the last one per account is kept for its logout. */
  const browsers = new Map<string, CookieJar>();

  return {
    issuer,
    provider,
    accounts,
    backchannel,
    sign: (claims, typ = 'logout+jwt') => new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'test-key', typ }).sign(privateKey),
    async authorize({ clientId, redirectUri, state, scope = 'openid profile email groups', accountId }) {
      loginAs = accountId;
      const jar = new CookieJar();
      browsers.set(accountId, jar);
      const codeVerifier = base64url(randomBytes(32));
      const nonce = base64url(randomBytes(32));
      const request = new URL(`${issuer}/auth`);
      request.search = new URLSearchParams({
        response_type: 'code',
        client_id: clientId,
        redirect_uri: redirectUri,
        scope,
        state,
        nonce,
        code_challenge: base64url(createHash('sha256').update(codeVerifier).digest()),
        code_challenge_method: 'S256',
        prompt: 'login',
      }).toString();
      let next = request.href;
      for (let hop = 0; hop < 10; hop++) {
        const response = await browse(next, jar);
        const location = response.headers.get('location');
        if (!location) throw new Error(`provider stopped at ${next}: ${response.status} ${await response.text()}`);
        const target = new URL(location, next);
        if (target.href.startsWith(redirectUri)) {
          const code = target.searchParams.get('code');
          if (!code) throw new Error(`no code in ${target.href}`);
          return { url: target, code, codeVerifier, nonce };
        }
        next = target.href;
      }
      throw new Error('too many redirects at the provider');
    },
    async logout(idTokenHint) {
      const sub = String(decodeJwt(idTokenHint).sub);
      const sessionJar = browsers.get(sub);
      if (!sessionJar) throw new Error(`${sub} never signed in here`);
      const page = await browse(`${issuer}/session/end?${new URLSearchParams({ id_token_hint: idTokenHint })}`, sessionJar);
      const html = await page.text();
      const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)?.[1];
      if (!xsrf) throw new Error(`no logout form: ${page.status} ${html.slice(0, 300)}`);
      const done = await browse(`${issuer}/session/end/confirm`, sessionJar, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ xsrf, logout: 'yes' }).toString(),
      });
      await done.text();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// The pieces of the OIDC sign-in on their own: state expiry and reuse, redirect URI rules, claim lookup, the
// access-token hash, group merging, the provider fetch's address rule, and discovery with a slash-typed issuer.
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumeState, issueState, STATE_LIFETIME_MS } from '../../src/core/auth/oidc/auth-state.ts';
import { identityFrom } from '../../src/core/auth/oidc/claims.ts';
import { accessTokenHash } from '../../src/core/auth/oidc/code-exchange.ts';
import { providerClient } from '../../src/core/auth/oidc/discovery.ts';
import { mergeMappings } from '../../src/core/auth/oidc/group-sync.ts';
import { providerFetch } from '../../src/core/auth/oidc/provider-fetch.ts';
import { checkAppRedirectUri, checkRedirectUri, effectiveMobileRedirectUris } from '../../src/core/auth/oidc/redirect-uris.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { makeTempDir } from '../helpers/temp-dir.ts';
import { startTestProvider, type TestProvider } from '../helpers/oidc-provider.ts';

let store: Store;
const temp = makeTempDir('bindery-oidc-');
beforeAll(async () => {
  store = await openStore(temp.file('bindery.sqlite'));
});
afterAll(async () => {
  await store.close();
  temp.remove();
});

describe('OIDC state', () => {
  it('is accepted once, before it expires, and is kept only as a hash', async () => {
    const now = Date.now();
    const state = await issueState(store.db, now);
    expect(state).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const rows = await store.db.selectFrom('oidc_auth_state').selectAll().execute();
    expect(rows.some((r) => r.state_hash === state)).toBe(false);
    await consumeState(store.db, state, now + 1000);
    await expect(consumeState(store.db, state, now + 2000)).rejects.toMatchObject({ code: 'OIDC_INVALID_STATE' });

    const late = await issueState(store.db, now);
    await expect(consumeState(store.db, late, now + STATE_LIFETIME_MS + 1)).rejects.toMatchObject({ code: 'OIDC_INVALID_STATE' });
    await expect(consumeState(store.db, '', now)).rejects.toMatchObject({ code: 'OIDC_INVALID_STATE' });
  });

  it('keeps at most the given number of live states, dropping the oldest', async () => {
    await store.db.deleteFrom('oidc_auth_state').execute();
    const now = Date.now();
    const states: string[] = [];
    for (let i = 0; i < 5; i++) states.push(await issueState(store.db, now + i, 3));
    expect(await store.db.selectFrom('oidc_auth_state').select('state_hash').execute()).toHaveLength(3);
    await expect(consumeState(store.db, states[0] ?? '', now + 10)).rejects.toMatchObject({ code: 'OIDC_INVALID_STATE' });
    await consumeState(store.db, states[4] ?? '', now + 10);
  });
});

describe('redirect URIs', () => {
  const configured = ['grimmory://oauth2-callback'];

  it('take a web callback on the request’s origin only', () => {
    expect(() => checkRedirectUri('https://books.example/oauth2-callback', configured, 'https://books.example')).not.toThrow();
    expect(() => checkRedirectUri('https://books.example/sub/oauth2-callback', configured, 'https://books.example/')).not.toThrow();
    expect(() => checkRedirectUri('https://books.example:443/oauth2-callback', configured, 'https://books.example')).not.toThrow();
    for (const [uri, origin] of [
      ['https://evil.example/oauth2-callback', 'https://books.example'],
      ['http://books.example/oauth2-callback', 'https://books.example'],
      ['https://books.example/callback', 'https://books.example'],
      ['', 'https://books.example'],
      ['not a uri', 'https://books.example'],
    ] as const) {
      expect(() => checkRedirectUri(uri, configured, origin), uri).toThrow(expect.objectContaining({ code: 'OIDC_INVALID_REDIRECT_URI' }));
    }
  });

  it('take a deep link only from the allow-list (the default includes the Booklore link; * allows any)', () => {
    expect(effectiveMobileRedirectUris([])).toEqual(['grimmory://oauth2-callback', 'booklore://oauth2-callback']);
    expect(() => checkRedirectUri('booklore://oauth2-callback', configured, undefined)).not.toThrow();
    expect(() => checkRedirectUri('myapp://cb', configured, undefined)).toThrow(expect.objectContaining({ code: 'OIDC_INVALID_REDIRECT_URI' }));
    expect(() => checkRedirectUri('myapp://cb', ['*'], undefined)).not.toThrow();
    expect(() => checkRedirectUri('grimmory://oauth2-callback#x', configured, undefined)).toThrow(expect.objectContaining({ code: 'OIDC_INVALID_REDIRECT_URI' }));
    expect(() => checkAppRedirectUri('https://books.example/oauth2-callback', ['*'])).toThrow(expect.objectContaining({ code: 'OIDC_INVALID_REDIRECT_URI' }));
    expect(() => checkAppRedirectUri('grimmory://oauth2-callback', configured)).not.toThrow();
  });
});

describe('claims', () => {
  const mapping = { username: 'nickname', name: null, email: null, groups: 'roles' };

  it('prefer the mapped claim, then the standard one, in the ID token before userinfo', () => {
    const who = identityFrom({ sub: 's1', preferred_username: 'std', sid: 'sid-1' }, { nickname: 'mapped', email: 'a@b.c', name: 'N', roles: ['r1', 7, 'r2'], picture: 'p' }, mapping);
    expect(who).toEqual({ subject: 's1', username: 'std', email: 'a@b.c', name: 'N', pictureUrl: 'p', groups: ['r1', 'r2'], sessionId: 'sid-1' });
    expect(identityFrom({ sub: 's1', nickname: 'mapped', preferred_username: 'std' }, {}, mapping).username).toBe('mapped');
  });

  it('name a user without a username claim by e-mail, else by subject', () => {
    const none = { username: null, name: null, email: null, groups: null };
    expect(identityFrom({ sub: 's2', email: 'x@y.z' }, {}, none).username).toBe('x@y.z');
    expect(identityFrom({ sub: 's3' }, {}, none)).toMatchObject({ username: 's3', groups: [], sessionId: null });
    expect(identityFrom({ sub: 's4', groups: ['g'] }, {}, none).groups).toEqual(['g']);
  });
});

describe('ID token checks', () => {
  it('compute at_hash as OIDC Core defines it', () => {
    const token = 'jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y';
    const left = createHash('sha256').update(token).digest().subarray(0, 16).toString('base64url');
    expect(accessTokenHash(token, 'RS256')).toBe(left);
    expect(accessTokenHash(token, 'ES512')).toBe(createHash('sha512').update(token).digest().subarray(0, 32).toString('base64url'));
  });
});

describe('group mappings', () => {
  it('merge: any admin mapping makes an admin; permissions and libraries add up; unknown names are ignored', () => {
    const merged = mergeMappings([
      { id: 1, oidcGroupClaim: 'a', isAdmin: false, permissions: ['permissionUpload', 'permissionBogus'], libraryIds: [1], description: null },
      { id: 2, oidcGroupClaim: 'b', isAdmin: true, permissions: ['permissionBulkEditMetadata', 'permissionDemoUser'], libraryIds: [1, 2], description: null },
    ]);
    expect(merged.admin).toBe(true);
    expect([...merged.permissions].sort()).toEqual(['canBulkEditMetadata', 'canUpload']);
    expect([...merged.libraryIds]).toEqual([1, 2]);
  });
});

describe('talking to the provider', () => {
  let op: TestProvider;
  beforeAll(async () => {
    op = await startTestProvider({ clients: [{ client_id: 'c', client_secret: 's', redirect_uris: ['grimmory://oauth2-callback'] }], accounts: [] });
  });
  afterAll(async () => op.close());

  it('reaches the provider’s hosts but still refuses other private addresses', async () => {
    const fetch = providerFetch([], ['127.0.0.1']);
    const ok = await fetch(`${op.issuer}/.well-known/openid-configuration`, { method: 'GET' });
    expect(ok.status).toBe(200);
    await expect(fetch('http://10.1.2.3/x', { method: 'GET' })).rejects.toMatchObject({ code: 'BLOCKED_ADDRESS' });
    await expect(fetch('http://localhost:1/x', { method: 'GET' })).rejects.toMatchObject({ code: 'BLOCKED_ADDRESS' });
  });

  it('discovers a provider whether its issuer is typed with a trailing slash or not, and refuses a foreign issuer', async () => {
    const provider = { issuerUri: `${op.issuer}/`, clientId: 'c', clientSecret: 's', scopes: null, claimMapping: { username: null, name: null, email: null, groups: null } };
    const client = await providerClient(provider, []);
    expect(client.metadata.issuer).toBe(op.issuer);
    expect(client.metadata.end_session_endpoint).toBe(`${op.issuer}/session/end`);

    // A server answering with someone else's discovery document.
    const impostor = createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ issuer: 'https://other.example', token_endpoint: 'x', jwks_uri: 'y' }));
    });
    await new Promise<void>((resolve) => impostor.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(impostor.address() as AddressInfo).port}`;
      await expect(providerClient({ ...provider, issuerUri: url }, [])).rejects.toMatchObject({ code: 'OIDC_PROVIDER_UNREACHABLE' });
      await expect(providerClient({ ...provider, issuerUri: 'http://127.0.0.1:1' }, [])).rejects.toMatchObject({ code: 'OIDC_PROVIDER_UNREACHABLE' });
    } finally {
      impostor.close();
    }
  });
});

// "Test connection" in the OIDC settings, against a real provider on 127.0.0.1 and against nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { startTestProvider, type TestProvider } from '../helpers/oidc-provider.ts';

let d: TestDaemon;
let provider: TestProvider;
let admin: string;

beforeAll(async () => {
  provider = await startTestProvider({ clients: [{ client_id: 'bindery', client_secret: 'secret', redirect_uris: ['http://localhost/oauth2-callback'] }], accounts: [] });
  d = await startTestDaemon({ outgoingAllowPrivateHosts: '127.0.0.1' });
  admin = await d.setupAdmin();
});
afterAll(async () => {
  await d.close();
  await provider.close();
});

const test = (body: object) => d.inject({ method: 'POST', url: '/api/v1/settings/oidc/test', headers: { authorization: `Bearer ${admin}` }, payload: body });
type Result = { success: boolean; checks: { name: string; status: string; message: string }[] };

describe('POST /api/v1/settings/oidc/test', () => {
  it('passes every check against a working provider', async () => {
    const res = await test({ issuerUri: provider.issuer, clientId: 'bindery', clientSecret: 'secret', scopes: 'openid profile email' });
    expect(res.statusCode).toBe(200);
    const result = res.json() as Result;
    expect(result.success).toBe(true);
    expect(result.checks.map((c) => c.name)).toEqual(['Issuer URI', 'Client ID', 'Discovery document', 'Signing keys', 'Token endpoint', 'Scopes']);
    expect(result.checks.find((c) => c.name === 'Signing keys')?.status).toBe('PASS');
    // The test provider speaks plain HTTP: said, not failed.
    expect(result.checks.find((c) => c.name === 'Token endpoint')?.status).toBe('WARN');
  });

  it('fails where the provider is not, and skips what depends on it', async () => {
    const result = (await test({ issuerUri: 'http://127.0.0.1:9/realms/none', clientId: 'bindery' })).json() as Result;
    expect(result.success).toBe(false);
    expect(result.checks.find((c) => c.name === 'Discovery document')?.status).toBe('FAIL');
    expect(result.checks.filter((c) => c.status === 'SKIP').map((c) => c.name)).toEqual(['Signing keys', 'Token endpoint', 'Scopes']);
  });

  it('fails an empty configuration at its first two checks', async () => {
    const empty = (await test({})).json() as Result;
    expect(empty.success).toBe(false);
    expect(empty.checks.slice(0, 2).map((c) => c.status)).toEqual(['FAIL', 'FAIL']);
    expect(empty.checks.slice(2).every((c) => c.status === 'SKIP')).toBe(true);
  });

  it('is for admins only', async () => {
    const user = await d.createUser('someone');
    expect((await d.inject({ method: 'POST', url: '/api/v1/settings/oidc/test', headers: { authorization: `Bearer ${user.token}` }, payload: {} })).statusCode).toBe(403);
  });
});

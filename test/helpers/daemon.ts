// Test harness: a real app on a real SQLite catalog in a temp dir, driven through fastify's inject (or listening on 127.0.0.1).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { loadConfig, type Config } from '../../src/core/config.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { buildApp, type BuiltApp } from '../../src/daemon/app.ts';
import type { Permissions } from '../../src/core/auth/permissions.ts';
import { ACCESS_TOKEN_SECONDS, signToken } from '../../src/core/auth/tokens.ts';
import { createUser } from '../../src/core/users/users.ts';

export interface TestDaemon extends BuiltApp {
  app: FastifyInstance;
  store: Store;
  config: Config;
  dir: string;
  inject(options: InjectOptions): Promise<LightMyRequestResponse>;
  /** Creates the first admin through the setup API and returns a bearer token for it. */
  setupAdmin(username?: string, password?: string): Promise<string>;
  login(username: string, password: string): Promise<string>;
  /** A valid access token for any user id, without going through the login route. */
  tokenFor(userId: number): Promise<string>;
  /** Creates a (non-admin unless given) user directly in the catalog and returns its id and a token. */
  createUser(username: string, permissions?: Partial<Permissions>, libraryIds?: number[]): Promise<{ id: number; token: string }>;
  close(): Promise<void>;
}

export async function startTestDaemon(overrides: Partial<Config> = {}): Promise<TestDaemon> {
  const dir = mkdtempSync(join(tmpdir(), 'bindery-daemon-'));
  const config: Config = { ...loadConfig({ env: {}, flags: { dataDir: join(dir, 'data') } }), logLevel: 'silent', ...overrides };
  const store = await openStore(join(config.dataDir, 'bindery.sqlite'));
  const built = await buildApp({ config, store });
  await built.app.ready();
  const inject = (options: InjectOptions): Promise<LightMyRequestResponse> => built.app.inject(options);
  const login = async (username: string, password: string): Promise<string> => {
    const res = await inject({ method: 'POST', url: `${config.basePath}/api/v1/auth/login`, payload: { username, password } });
    if (res.statusCode !== 200) throw new Error(`login failed: ${res.statusCode} ${res.body}`);
    return (res.json() as { accessToken: string }).accessToken;
  };
  const tokenFor = async (userId: number): Promise<string> => {
    const user = await store.db.selectFrom('users').select(['username', 'is_default_password', 'session_version']).where('id', '=', userId).executeTakeFirstOrThrow();
    return signToken(built.ctx.jwtSecret, { userId, username: user.username, isDefaultPassword: user.is_default_password === 1, sessionVersion: user.session_version }, 'access', ACCESS_TOKEN_SECONDS);
  };
  return {
    ...built,
    tokenFor,
    createUser: async (username, permissions = {}, libraryIds = []) => {
      const id = await createUser(store.db, { username, password: `${username}-password`, name: username, permissions, libraryIds });
      return { id, token: await tokenFor(id) };
    },
    store,
    config,
    dir,
    inject,
    login,
    setupAdmin: async (username = 'admin', password = 'admin-password') => {
      const res = await inject({ method: 'POST', url: `${config.basePath}/api/v1/setup`, payload: { username, password, name: 'Admin', email: `${username}@example.com` } });
      if (res.statusCode !== 200) throw new Error(`setup failed: ${res.statusCode} ${res.body}`);
      return login(username, password);
    },
    close: async () => {
      await built.app.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

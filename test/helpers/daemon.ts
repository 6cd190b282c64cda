// Test harness: a real app on a real SQLite catalog in a temp dir, driven through fastify's inject (or listening on 127.0.0.1).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { loadConfig, type Config } from '../../src/core/config.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { buildApp, type BuiltApp } from '../../src/daemon/app.ts';

export interface TestDaemon extends BuiltApp {
  app: FastifyInstance;
  store: Store;
  config: Config;
  dir: string;
  inject(options: InjectOptions): Promise<LightMyRequestResponse>;
  /** Creates the first admin through the setup API and returns a bearer token for it. */
  setupAdmin(username?: string, password?: string): Promise<string>;
  login(username: string, password: string): Promise<string>;
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
  return {
    ...built,
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

// A PostgreSQL server for tests that need one whatever engine the suite runs on (`db copy` to and from PostgreSQL):
// the suite's own server on its PostgreSQL run, otherwise a throwaway cluster started by scripts/pg-test-server.
// Without PostgreSQL installed such tests are skipped, except in CI, where scripts/test-deps installs it.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { makeTempDir, type TempDir } from './temp-dir.ts';

const run = promisify(execFile);
const SCRIPT = join(import.meta.dirname, '..', '..', 'scripts', 'pg-test-server');

export interface PostgresServer {
  /** A new, empty database on the server; its URL. */
  createDatabase(): Promise<string>;
  stop(): Promise<void>;
}

export function postgresInstalled(): boolean {
  const root = '/usr/lib/postgresql';
  return existsSync(root) && readdirSync(root).some((version) => existsSync(join(root, version, 'bin', 'initdb')));
}

/** Whether tests needing a PostgreSQL server can run here. */
export const postgresAvailable = Boolean(process.env.BINDERY_TEST_DATABASE_SERVER) || postgresInstalled() || Boolean(process.env.CI);

let counter = 0;

export async function startPostgresServer(): Promise<PostgresServer> {
  let cluster: TempDir | undefined;
  let serverUrl = process.env.BINDERY_TEST_DATABASE_SERVER;
  if (!serverUrl) {
    cluster = makeTempDir('bindery-pg-');
    serverUrl = (await run(SCRIPT, ['start', cluster.dir], { timeout: 120_000 })).stdout.trim().split('\n').at(-1) as string;
  }
  const server = serverUrl;
  return {
    createDatabase: async () => {
      const name = `copy_${process.pid}_${Date.now()}_${++counter}`;
      const client = new pg.Client({ connectionString: server });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      const url = new URL(server);
      url.pathname = `/${name}`;
      return url.toString();
    },
    stop: async () => {
      if (cluster) {
        await run(SCRIPT, ['stop', cluster.dir], { timeout: 60_000 }).catch(() => undefined);
        cluster.remove();
      }
    },
  };
}

// A PostgreSQL cluster of a test's own (scripts/pg-test-server), for tests that restart or stop the server: the
// suite's shared test server must never be restarted under the other test files.
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { chmodSync, existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';

const ROOT = resolve(import.meta.dirname, '../..');

function binDir(): string | undefined {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base).sort((a, b) => Number(a) - Number(b));
  const bin = versions.length > 0 ? join(base, versions.at(-1) as string, 'bin') : undefined;
  return bin && existsSync(join(bin, 'pg_ctl')) ? bin : undefined;
}

export const postgresInstalled = binDir() !== undefined;

export interface PgCluster {
  /** A database of its own on the cluster, migrated on first open. */
  url: string;
  /** Asynchronous, so that the test's clients keep sending while the server goes down and comes back. */
  restart(): Promise<void>;
  stop(): void;
}

async function asOwner(args: string[]): Promise<void> {
  const root = process.getuid?.() === 0;
  await promisify(execFile)(root ? 'runuser' : (args[0] as string), root ? ['-u', 'postgres', '--', ...args] : args.slice(1));
}

export async function startPgCluster(database = 'bindery'): Promise<PgCluster> {
  // The server runs as the postgres user when the tests run as root: its folder must be reachable by that user.
  const dir = mkdtempSync(join(tmpdir(), 'bindery-pg-'));
  chmodSync(dir, 0o755);
  const server = execFileSync(join(ROOT, 'scripts/pg-test-server'), ['start', dir], { encoding: 'utf8', env: { ...process.env, BINDERY_TEST_DATABASE_SERVER: '' } }).trim().split('\n').at(-1) as string;
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database} TEMPLATE bindery_template`);
  await admin.end();
  const url = new URL(server);
  url.pathname = `/${database}`;
  const pgCtl = join(binDir() as string, 'pg_ctl');
  return {
    url: url.toString(),
    restart: () => asOwner([pgCtl, '-D', join(dir, 'data'), '-l', join(dir, 'server.log'), '-m', 'fast', '-w', 'restart']),
    stop: () => execFileSync(join(ROOT, 'scripts/pg-test-server'), ['stop', dir], { stdio: 'ignore' }),
  };
}

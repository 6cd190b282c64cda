// A PostgreSQL server for benchmarks: a throwaway cluster started with scripts/pg-test-server, or a server given by
// URL. Each catalog gets a database of its own (copied from the migrated template when the server has one), dropped
// at the end. On our own cluster the server's CPU time is known too: on PostgreSQL part of the work moves out of
// the bindery process, and a fair comparison counts it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { TEMPLATE_DATABASE } from '../src/core/store/test-databases.ts';
import { childrenOf, ROOT, statFields, ticksToMs } from './daemon-process.ts';

export interface BenchPostgres {
  /** Where the server is, for the record (no password). */
  description: string;
  /** CPU time the whole server has used so far (every backend, ended ones included), or undefined for a server given by URL. */
  cpuMs(): number | undefined;
  /** A new empty (migrated, when the server has the template) database; its URL. */
  createDatabase(name: string): Promise<string>;
  /** Drops the databases made here and stops the cluster if it was started here. */
  close(): Promise<void>;
}

const SCRIPT = join(ROOT, 'scripts', 'pg-test-server');

async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

/**
 * How a throwaway cluster writes: `durable` as a stock PostgreSQL server does (fsync, full page writes, synchronous
 * commit), `test` as the test suite's cluster (none of them).
 */
export type ClusterWrites = 'durable' | 'test';

/**
 * `serverUrl`: a server to use (the user must be allowed to create databases); without it a throwaway cluster
 * writing as `writes` says.
 */
export async function benchPostgres(serverUrl?: string, writes: ClusterWrites = 'durable'): Promise<BenchPostgres> {
  let clusterDir: string | undefined;
  let url = serverUrl;
  if (!url) {
    clusterDir = mkdtempSync(join(tmpdir(), 'bindery-bench-pg-'));
    url = execFileSync(SCRIPT, ['start', clusterDir], { encoding: 'utf8' }).trim().split('\n').at(-1) as string;
    if (writes === 'durable') {
      await withClient(url, async (client) => {
        for (const setting of ['fsync', 'full_page_writes', 'synchronous_commit']) await client.query(`ALTER SYSTEM SET ${setting} = on`);
        await client.query('SELECT pg_reload_conf()');
      });
    }
  }
  const server = url;
  const postmaster = clusterDir ? Number(readFileSync(join(clusterDir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]) : undefined;
  const created: string[] = [];
  const hasTemplate = await withClient(server, async (client) => (await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [TEMPLATE_DATABASE])).rowCount === 1);
  const redacted = new URL(server);
  redacted.password = '';
  return {
    description: clusterDir
      ? `throwaway cluster in ${clusterDir} (scripts/pg-test-server, ${writes === 'durable' ? 'then fsync, full_page_writes and synchronous_commit on as in a stock server' : 'fsync, full_page_writes and synchronous_commit off'})`
      : redacted.toString(),
    cpuMs: () => {
      if (postmaster === undefined) return undefined;
      // The postmaster's own time and its ended backends' (counted once it has waited for them), plus the live ones.
      const own = statFields(postmaster);
      let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
      for (const pid of childrenOf(postmaster)) {
        try {
          const fields = statFields(pid);
          ticks += Number(fields[11]) + Number(fields[12]);
        } catch {
          // ended meanwhile
        }
      }
      return ticksToMs(ticks);
    },
    createDatabase: async (name) => {
      await withClient(server, async (client) => {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await client.query(hasTemplate ? `CREATE DATABASE ${name} TEMPLATE ${TEMPLATE_DATABASE} STRATEGY file_copy` : `CREATE DATABASE ${name}`);
      });
      created.push(name);
      const database = new URL(server);
      database.pathname = `/${name}`;
      return database.toString();
    },
    close: async () => {
      if (clusterDir) {
        execFileSync(SCRIPT, ['stop', clusterDir]);
        return;
      }
      await withClient(server, async (client) => {
        for (const name of created) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      });
    },
  };
}

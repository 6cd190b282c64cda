// `bindery db copy` of a large catalog, both ways: `npm run bench:db-copy -- [--books 100000] [--server postgres://…]`.
// The catalog comes from bench/book-catalog.ts (books with metadata, authors, categories, tags, files, progress);
// without --server a throwaway PostgreSQL cluster is started with scripts/pg-test-server. Prints, per direction, wall
// time, this process's CPU time (the database server's own CPU is not included), rows per second, peak RSS and the
// load average.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { compareCatalogs, copyCatalog } from '../src/core/store/catalog-copy.ts';
import { openSqliteFile, openStore, type Store } from '../src/core/store/store.ts';
import { fillCatalog } from './book-catalog.ts';
import { peakRssMb } from './daemon-process.ts';

const { values } = parseArgs({ options: { books: { type: 'string', default: '100000' }, server: { type: 'string' } } });
const books = Number(values.books);
const work = mkdtempSync(join(tmpdir(), 'bindery-bench-db-copy-'));
const script = join(import.meta.dirname, '..', 'scripts', 'pg-test-server');
const cluster = join(work, 'pg');
const server = values.server ?? execFileSync(script, ['start', cluster], { encoding: 'utf8' }).trim().split('\n').at(-1) as string;

async function database(name: string): Promise<string> {
  const client = new pg.Client({ connectionString: server });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS ${name}`);
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(server);
  url.pathname = `/${name}`;
  return url.toString();
}

async function measure(label: string, work: () => Promise<number>): Promise<void> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const rows = await work();
  const wall = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const cpuSeconds = (used.user + used.system) / 1e6;
  console.log(
    `${label.padEnd(28)} ${rows} rows  ${wall.toFixed(1)} s wall  ${cpuSeconds.toFixed(1)} s CPU  ${Math.round(rows / wall)} rows/s  ${((cpuSeconds * 1e6) / rows).toFixed(1)} µs CPU/row  peak RSS ${Math.round(peakRssMb(process.pid))} MB  load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`,
  );
}

try {
  const source = await openSqliteFile(join(work, 'source.sqlite'));
  const user = (await source.db.insertInto('users').values({ username: 'bench', password_hash: 'x', name: 'Bench' }).returning('id').executeTakeFirstOrThrow()).id;
  await fillCatalog(source, books, join(work, 'books'), user);
  const target = await openStore(await database('bench_copy'));
  const back = await openSqliteFile(join(work, 'back.sqlite'));
  const copy = (from: Store, to: Store) => async () => (await copyCatalog(from, to)).rows;
  console.log(`${books} books`);
  await measure('SQLite → PostgreSQL', copy(source, target));
  await measure('PostgreSQL → SQLite', copy(target, back));
  await measure('compare SQLite / PostgreSQL', async () => (await compareCatalogs(source, target)).tables.reduce((n, t) => n + t.rows, 0));
  await Promise.all([source.close(), target.close(), back.close()]);
} finally {
  if (!values.server) execFileSync(script, ['stop', cluster]);
  rmSync(work, { recursive: true, force: true });
}

// `bindery db check`: is the catalog whole, on either engine? On SQLite, the engine's own checks (integrity_check
// reads every page and index, foreign_key_check every reference). On PostgreSQL, whose storage checks itself, what can
// still go wrong: rows pointing at rows that are gone (foreign keys enforced only while triggers ran), identity
// sequences behind the ids already used (rows copied in with their ids), and on both a schema behind or ahead of this
// Bindery's migrations.
import { migrationProvider } from './migrations/index.ts';
import { catalogTables, foreignKeys, quoteName, type ForeignKey } from './schema-facts.ts';
import type { SqlExec } from './sql-exec.ts';
import type { Store } from './store.ts';

export type CheckName = 'integrity' | 'foreign-keys' | 'migrations' | 'id-sequences';

export interface CheckProblem {
  check: CheckName;
  table?: string;
  message: string;
}

export interface IntegrityReport {
  engine: Store['engine'];
  /** The checks that ran, in order. */
  checks: CheckName[];
  /** Empty when the catalog is whole. */
  problems: CheckProblem[];
}

/** Problems of one kind listed at most this often (the first ones name the table and rows to look at). */
const LISTED = 50;

export async function checkCatalog(store: Store): Promise<IntegrityReport> {
  return store.read(async ({ exec }) => {
    const problems: CheckProblem[] = [];
    const checks: CheckName[] = [];
    const run = async (name: CheckName, check: () => Promise<CheckProblem[]>): Promise<void> => {
      checks.push(name);
      problems.push(...(await check()).slice(0, LISTED));
    };
    if (store.engine === 'sqlite') {
      await run('integrity', () => sqliteIntegrity(exec));
      await run('foreign-keys', () => sqliteForeignKeys(exec));
    } else {
      await run('foreign-keys', async () => orphans(exec, await foreignKeys(exec, store.dialect)));
      await run('id-sequences', () => postgresSequences(exec));
    }
    await run('migrations', () => migrationState(exec, store));
    return { engine: store.engine, checks, problems };
  });
}

async function sqliteIntegrity(exec: SqlExec): Promise<CheckProblem[]> {
  const rows = await exec.all('PRAGMA integrity_check(100)');
  const messages = rows.map((r) => String(Object.values(r)[0]));
  return messages.length === 1 && messages[0] === 'ok' ? [] : messages.map((message) => ({ check: 'integrity', message }));
}

async function sqliteForeignKeys(exec: SqlExec): Promise<CheckProblem[]> {
  const rows = await exec.all('PRAGMA foreign_key_check');
  const byReference = new Map<string, { table: string; parent: string; rows: number[] }>();
  for (const r of rows) {
    const key = `${r.table as string}→${r.parent as string}`;
    let entry = byReference.get(key);
    if (!entry) byReference.set(key, (entry = { table: r.table as string, parent: r.parent as string, rows: [] }));
    entry.rows.push(r.rowid as number);
  }
  return [...byReference.values()].map((e) => ({
    check: 'foreign-keys',
    table: e.table,
    message: `${e.rows.length} rows of ${e.table} point at ${e.parent} rows that do not exist (rowid ${e.rows.slice(0, 5).join(', ')}${e.rows.length > 5 ? ', …' : ''})`,
  }));
}

/** Rows whose foreign key is set (every column not null) but names no row of the referenced table. */
async function orphans(exec: SqlExec, keys: readonly ForeignKey[]): Promise<CheckProblem[]> {
  const problems: CheckProblem[] = [];
  for (const key of keys) {
    const child = key.columns.map((c) => `c.${quoteName(c)}`);
    const matches = key.columns.map((c, i) => `p.${quoteName(key.referencedColumns[i] as string)} = c.${quoteName(c)}`).join(' AND ');
    const found = await exec.get(
      `SELECT count(*) AS n, min(${child[0]}) AS example FROM ${quoteName(key.table)} c
        WHERE ${child.map((c) => `${c} IS NOT NULL`).join(' AND ')}
          AND NOT EXISTS (SELECT 1 FROM ${quoteName(key.references)} p WHERE ${matches})`,
    );
    const count = Number(found?.n ?? 0);
    if (count > 0) {
      problems.push({
        check: 'foreign-keys',
        table: key.table,
        message: `${count} rows of ${key.table} point at ${key.references} rows that do not exist (${key.table}.${key.columns.join(', ')} = ${String(found?.example)}${count > 1 ? ', …' : ''})`,
      });
    }
  }
  return problems;
}

async function postgresSequences(exec: SqlExec): Promise<CheckProblem[]> {
  const problems: CheckProblem[] = [];
  const columns = await exec.all(
    `SELECT table_name, column_name, pg_get_serial_sequence(quote_ident(table_name), column_name) AS sequence
       FROM information_schema.columns WHERE table_schema = current_schema() AND is_identity = 'YES' ORDER BY table_name`,
  );
  for (const c of columns) {
    if (!c.sequence) continue;
    const state = await exec.get(`SELECT last_value, is_called FROM ${String(c.sequence)}`);
    const next = Number(state?.last_value) + (state?.is_called === true ? 1 : 0);
    const used = Number((await exec.get(`SELECT coalesce(max(${quoteName(c.column_name as string)}), 0) AS m FROM ${quoteName(c.table_name as string)}`))?.m ?? 0);
    if (next <= used) {
      problems.push({ check: 'id-sequences', table: c.table_name as string, message: `the next ${c.table_name as string}.${c.column_name as string} would be ${next}, but ids up to ${used} are taken: new rows would collide (bindery db copy and imports set this right; so does restoring a backup)` });
    }
  }
  return problems;
}

async function migrationState(exec: SqlExec, store: Store): Promise<CheckProblem[]> {
  const known = Object.keys(await migrationProvider.getMigrations()).sort();
  const tables = await catalogTables(exec, store.dialect);
  if (!tables.includes('bindery_migration')) return [{ check: 'migrations', message: 'the catalog has no migration table: it was never opened by Bindery' }];
  const applied = new Set((await exec.all('SELECT name FROM bindery_migration')).map((r) => r.name as string));
  const pending = known.filter((name) => !applied.has(name));
  const unknown = [...applied].filter((name) => !known.includes(name)).sort();
  const problems: CheckProblem[] = [];
  if (pending.length) problems.push({ check: 'migrations', message: `${pending.length} migrations are not applied yet (${pending.join(', ')}): any other bindery command applies them` });
  if (unknown.length) problems.push({ check: 'migrations', message: `the catalog has migrations this Bindery does not know (${unknown.join(', ')}): it was used by a newer version` });
  return problems;
}

// Copying a whole catalog from one store to another, either engine to either engine: `bindery db copy`, a backup
// taken on PostgreSQL (into the archive's SQLite file) and a restore onto PostgreSQL. The source is read in one
// consistent snapshot, table by table in foreign-key order, in batches (memory stays bounded whatever the catalog's
// size); the target is written in one transaction, which before it commits reads every table back and compares row
// counts and checksums with what was read from the source. Any difference, or any failure, rolls the target back.
import { createHash } from 'node:crypto';
import { CodedError } from '../coded-error.ts';
import { syncIdSequences } from './id-sequences.ts';
import { catalogTables, DERIVED_TABLES, foreignKeys, MIGRATION_TABLES, parentsFirst, quoteName, tableFacts, type TableFacts } from './schema-facts.ts';
import type { SqlExec, SqlRow, SqlValue } from './sql-exec.ts';
import type { SqlDialect } from './dialect.ts';
import type { Store } from './store.ts';

export type CatalogCopyErrorCode = 'NOT_EMPTY' | 'SCHEMA_MISMATCH' | 'CHECKSUM_MISMATCH' | 'COPY_FAILED';

export class CatalogCopyError extends CodedError<CatalogCopyErrorCode> {}

export interface TableDigest {
  table: string;
  rows: number;
  /** Order-independent: the sum of each row's SHA-256 (first 128 bits), as 32 hex digits. */
  checksum: string;
}

export interface CatalogCopyProgress {
  phase: 'copying' | 'checking';
  table: string;
  /** Rows done so far in this phase, across tables. */
  done: number;
  total: number;
}

export interface CopyCatalogOptions {
  /** Replace what the target holds; without it a target with rows of its own is refused. */
  replace?: boolean;
  onProgress?(progress: CatalogCopyProgress): void;
}

export interface CatalogCopyResult {
  tables: TableDigest[];
  rows: number;
  /** Schema version (newest migration) both catalogs are at. */
  schema: string;
}

const MASK = (1n << 128n) - 1n;
/** Rows per statement: SQLite allows 32,766 parameters in one statement, PostgreSQL 65,535. */
const MAX_PARAMETERS = 30_000;
const MAX_BATCH = 1000;

type CanonicalValue = string | number | null | { bytes: string };

/** A value as both engines give it back: numbers for numbers, text for text, bytes as base64. */
function canonical(value: unknown): CanonicalValue {
  if (value === null || value === undefined) return null;
  if (Buffer.isBuffer(value)) return { bytes: value.toString('base64') };
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number') return Object.is(value, -0) ? 0 : value;
  if (value instanceof Date) return value.toISOString();
  return String(value);
}

/** Count and checksum of a set of rows, whatever order they come in. */
export class RowDigest {
  rows = 0;
  private sum = 0n;
  private readonly columns: readonly string[];

  /** `columns`: the columns hashed, in the order hashed (the same on both sides). */
  constructor(columns: readonly string[]) {
    this.columns = columns;
  }

  add(row: SqlRow): void {
    const text = JSON.stringify(this.columns.map((c) => canonical(row[c])));
    const hash = createHash('sha256').update(text).digest();
    this.sum = (this.sum + (hash.readBigUInt64BE(0) << 64n) + hash.readBigUInt64BE(8)) & MASK;
    this.rows++;
  }

  get checksum(): string {
    return this.sum.toString(16).padStart(32, '0');
  }
}

interface TablePlan {
  facts: TableFacts;
  /** Sorted: the order values are hashed in. */
  hashed: string[];
}

function batchRows(columns: number): number {
  return Math.max(1, Math.min(MAX_BATCH, Math.floor(MAX_PARAMETERS / Math.max(columns, 1))));
}

/** Reads a table in primary-key order, one batch at a time (keyset pagination: each batch starts after the last key). */
async function* tableBatches(exec: SqlExec, facts: TableFacts): AsyncGenerator<SqlRow[]> {
  const columns = facts.columns.map((c) => quoteName(c.name)).join(', ');
  const key = facts.primaryKey.map(quoteName);
  if (key.length === 0) throw new CatalogCopyError('SCHEMA_MISMATCH', `table ${facts.name} has no primary key`);
  const limit = batchRows(facts.columns.length);
  const order = `order by ${key.join(', ')} limit ${limit}`;
  const after = key.length === 1 ? `${key[0]} > ?` : `(${key.join(', ')}) > (${key.map(() => '?').join(', ')})`;
  let last: SqlRow | undefined;
  for (;;) {
    const rows = last
      ? await exec.all(`select ${columns} from ${quoteName(facts.name)} where ${after} ${order}`, facts.primaryKey.map((k) => (last as SqlRow)[k] as SqlValue))
      : await exec.all(`select ${columns} from ${quoteName(facts.name)} ${order}`);
    if (rows.length === 0) return;
    yield rows;
    if (rows.length < limit) return;
    last = rows.at(-1);
  }
}

async function insertBatch(exec: SqlExec, facts: TableFacts, rows: readonly SqlRow[]): Promise<void> {
  const names = facts.columns.map((c) => c.name);
  const tuple = `(${names.map(() => '?').join(', ')})`;
  const params: SqlValue[] = [];
  for (const row of rows) for (const name of names) params.push((row[name] ?? null) as SqlValue);
  await exec.run(`insert into ${quoteName(facts.name)} (${names.map(quoteName).join(', ')}) values ${rows.map(() => tuple).join(', ')}`, params);
}

/** The digest of every row of a table as the given connection sees it. */
export async function digestTable(exec: SqlExec, plan: TablePlan, onBatch?: (rows: number) => void): Promise<TableDigest> {
  const digest = new RowDigest(plan.hashed);
  for await (const rows of tableBatches(exec, plan.facts)) {
    for (const row of rows) digest.add(row);
    onBatch?.(rows.length);
  }
  return { table: plan.facts.name, rows: digest.rows, checksum: digest.checksum };
}

async function appliedMigrations(exec: SqlExec): Promise<string[]> {
  return (await exec.all('select name from bindery_migration order by name')).map((r) => r.name as string);
}

/** The data tables of a catalog (the migration bookkeeping left out), parents before children. */
async function planOf(exec: SqlExec, dialect: SqlDialect): Promise<TablePlan[]> {
  const tables = (await catalogTables(exec, dialect)).filter((t) => !MIGRATION_TABLES.includes(t) && !DERIVED_TABLES.includes(t));
  const plans: TablePlan[] = [];
  for (const table of parentsFirst(tables, await foreignKeys(exec, dialect))) {
    const facts = (await tableFacts(exec, dialect, table)) as TableFacts;
    plans.push({ facts, hashed: facts.columns.map((c) => c.name).sort() });
  }
  return plans;
}

function describeSchemaDifference(source: TablePlan[], target: TablePlan[]): string | undefined {
  const targetByName = new Map(target.map((p) => [p.facts.name, p]));
  for (const plan of source) {
    const other = targetByName.get(plan.facts.name);
    if (!other) return `the target has no table ${plan.facts.name}`;
    const missing = plan.hashed.filter((c) => !other.hashed.includes(c));
    const extra = other.hashed.filter((c) => !plan.hashed.includes(c));
    if (missing.length || extra.length) return `table ${plan.facts.name} differs: ${[...missing.map((c) => `the target lacks ${c}`), ...extra.map((c) => `the source lacks ${c}`)].join(', ')}`;
    targetByName.delete(plan.facts.name);
  }
  const extraTables = [...targetByName.keys()];
  return extraTables.length ? `the source has no table ${extraTables.join(', ')}` : undefined;
}

let seeded: Promise<Set<string>> | undefined;

/**
 * The tables a fresh catalog already has rows in (the defaults some migrations write: settings, task schedules): a
 * target holding only those is empty for a copy, which replaces them with the source's.
 */
function seededTables(): Promise<Set<string>> {
  seeded ??= (async () => {
    const { openSqliteStore } = await import('./sqlite-store.ts');
    const fresh = await openSqliteStore(':memory:');
    try {
      const out = new Set<string>();
      for (const table of await catalogTables(fresh.exec, fresh.dialect)) {
        if (!MIGRATION_TABLES.includes(table) && (await fresh.exec.get(`select 1 as found from ${quoteName(table)} limit 1`))) out.add(table);
      }
      return out;
    } finally {
      await fresh.close();
    }
  })();
  return seeded;
}

/** The tables holding rows of their own, as `name (rows)`: none for a catalog nobody has used yet. */
async function occupiedTables(exec: SqlExec, tables: readonly string[]): Promise<string[]> {
  const seededNow = await seededTables();
  const occupied: string[] = [];
  for (const table of tables) {
    if (seededNow.has(table) || MIGRATION_TABLES.includes(table) || DERIVED_TABLES.includes(table)) continue;
    const rows = await tableCount(exec, table);
    if (rows > 0) occupied.push(`${table} (${rows})`);
  }
  return occupied;
}

/** Whether the catalog holds nothing but what a fresh catalog holds. */
export async function isEmptyCatalog(store: Store): Promise<boolean> {
  return store.read(async ({ exec }) => (await occupiedTables(exec, await catalogTables(exec, store.dialect))).length === 0);
}

async function tableCount(exec: SqlExec, table: string): Promise<number> {
  return Number((await exec.get(`select count(*) as n from ${quoteName(table)}`))?.n ?? 0);
}

function compareDigests(expected: readonly TableDigest[], found: readonly TableDigest[]): string[] {
  const byTable = new Map(found.map((d) => [d.table, d]));
  const problems: string[] = [];
  for (const want of expected) {
    const got = byTable.get(want.table);
    if (!got) problems.push(`${want.table}: missing`);
    else if (got.rows !== want.rows) problems.push(`${want.table}: ${got.rows} rows where ${want.rows} were expected`);
    else if (got.checksum !== want.checksum) problems.push(`${want.table}: the rows differ (checksum ${got.checksum}, expected ${want.checksum})`);
  }
  return problems;
}

/** Copies every table of `source` into `target`, which must be at the same schema version. */
export async function copyCatalog(source: Store, target: Store, options: CopyCatalogOptions = {}): Promise<CatalogCopyResult> {
  return source.read(async ({ exec: from }) => {
    const plans = await planOf(from, source.dialect);
    const schema = (await appliedMigrations(from)).at(-1) ?? '';
    const counts = new Map<string, number>();
    for (const plan of plans) counts.set(plan.facts.name, await tableCount(from, plan.facts.name));
    const total = [...counts.values()].reduce((a, b) => a + b, 0);

    return target.write(async ({ exec: to, db }) => {
      const [sourceMigrations, targetMigrations] = [await appliedMigrations(from), await appliedMigrations(to)];
      if (sourceMigrations.join() !== targetMigrations.join()) {
        throw new CatalogCopyError('SCHEMA_MISMATCH', `the catalogs are at different schema versions (source ${sourceMigrations.at(-1) ?? 'none'}, target ${targetMigrations.at(-1) ?? 'none'}): open both with this Bindery first`);
      }
      const difference = describeSchemaDifference(plans, await planOf(to, target.dialect));
      if (difference) throw new CatalogCopyError('SCHEMA_MISMATCH', `the catalogs' schemas differ: ${difference}`);

      if (!options.replace) {
        const occupied = await occupiedTables(to, plans.map((p) => p.facts.name));
        if (occupied.length) throw new CatalogCopyError('NOT_EMPTY', `the target already holds rows in ${occupied.slice(0, 5).join(', ')}${occupied.length > 5 ? ` and ${occupied.length - 5} more tables` : ''}; add --force to replace everything it holds`);
      }
      for (const plan of [...plans].reverse()) await to.run(`delete from ${quoteName(plan.facts.name)}`);

      const copied: TableDigest[] = [];
      let done = 0;
      for (const plan of plans) {
        const digest = new RowDigest(plan.hashed);
        options.onProgress?.({ phase: 'copying', table: plan.facts.name, done, total });
        try {
          for await (const rows of tableBatches(from, plan.facts)) {
            await insertBatch(to, plan.facts, rows);
            for (const row of rows) digest.add(row);
            done += rows.length;
            options.onProgress?.({ phase: 'copying', table: plan.facts.name, done, total });
          }
        } catch (error) {
          if (error instanceof CatalogCopyError) throw error;
          throw new CatalogCopyError('COPY_FAILED', `copying ${plan.facts.name} failed after ${digest.rows} rows, nothing was written: ${(error as Error).message}`);
        }
        copied.push({ table: plan.facts.name, rows: digest.rows, checksum: digest.checksum });
      }
      await syncIdSequences(db);

      let checked = 0;
      const found: TableDigest[] = [];
      for (const plan of plans) {
        found.push(
          await digestTable(to, plan, (rows) => {
            checked += rows;
            options.onProgress?.({ phase: 'checking', table: plan.facts.name, done: checked, total });
          }),
        );
      }
      const problems = compareDigests(copied, found);
      if (problems.length) throw new CatalogCopyError('CHECKSUM_MISMATCH', `the copy does not match the source, nothing was written: ${problems.join('; ')}`);
      return { tables: copied.sort((a, b) => (a.table < b.table ? -1 : 1)), rows: done, schema };
    });
  });
}

export interface CatalogComparison {
  /** The source's digests. */
  tables: TableDigest[];
  /** One line per table that differs; empty when the two hold the same rows. */
  differences: string[];
}

/** Compares two catalogs table by table (row counts and checksums), each read in one snapshot; nothing is written. */
export async function compareCatalogs(source: Store, target: Store): Promise<CatalogComparison> {
  const digestsOf = (store: Store): Promise<{ plans: TablePlan[]; digests: TableDigest[] }> =>
    store.read(async ({ exec }) => {
      const plans = await planOf(exec, store.dialect);
      const digests: TableDigest[] = [];
      for (const plan of plans) digests.push(await digestTable(exec, plan));
      return { plans, digests };
    });
  const [left, right] = [await digestsOf(source), await digestsOf(target)];
  const difference = describeSchemaDifference(left.plans, right.plans);
  if (difference) throw new CatalogCopyError('SCHEMA_MISMATCH', `the catalogs' schemas differ: ${difference}`);
  return { tables: left.digests.sort((a, b) => (a.table < b.table ? -1 : 1)), differences: compareDigests(left.digests, right.digests) };
}

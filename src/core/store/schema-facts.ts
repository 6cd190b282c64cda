// What the catalog's schema says about itself, read from the engine's own catalog (SQLite's pragmas, PostgreSQL's
// system catalogs): the tables, their columns, keys and unique indexes, and the foreign keys between them. Copies,
// imports and integrity checks ask here instead of knowing the schema by heart.
import type { SqlDialect } from './dialect.ts';
import type { SqlExec } from './sql-exec.ts';

/** Kysely's bookkeeping of applied migrations: part of the schema, not of the catalog's data. */
export const MIGRATION_TABLES: readonly string[] = ['bindery_migration', 'bindery_migration_lock'];

/** Kept by SQLite's own triggers for its connections (migration 052: the reading state's version); PostgreSQL has none. */
export const SQLITE_ONLY_TABLES: readonly string[] = ['reading_state_version'];

/**
 * Figures derived from the catalog and kept by its own triggers (migrations 044, 052 and 054): a copy leaves them out
 * (the target's triggers log every series it receives as stale, to be worked out again, give every book it receives a
 * version and count its reading state anew), and they do not make a catalog used.
 */
export const DERIVED_TABLES: readonly string[] = ['komga_series_summary', 'komga_series_stale', 'book_version', ...SQLITE_ONLY_TABLES];

export interface ColumnFacts {
  name: string;
  notnull: boolean;
  hasDefault: boolean;
  /** An integer type (SQLite INTEGER, PostgreSQL bigint/integer/smallint). */
  integer: boolean;
}

export interface TableFacts {
  name: string;
  /** In the table's own order. */
  columns: ColumnFacts[];
  /** The primary key's columns in key order (every catalog table has one). */
  primaryKey: string[];
  /** Column sets of the unique indexes other than the primary key, leaving out partial and expression indexes. */
  uniques: string[][];
}

export interface ForeignKey {
  table: string;
  columns: string[];
  references: string;
  referencedColumns: string[];
}

/** A name as an SQL identifier, quoted for both engines. */
export function quoteName(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Every table of the catalog, by name, the migration bookkeeping included. */
export async function catalogTables(exec: SqlExec, dialect: SqlDialect): Promise<string[]> {
  const rows =
    dialect.engine === 'postgres'
      ? await exec.all("select tablename as name from pg_tables where schemaname = current_schema() order by tablename")
      : await exec.all("select name from sqlite_master where type = 'table' and name not like 'sqlite\\_%' escape '\\' order by name");
  return rows.map((r) => r.name as string);
}

export async function tableFacts(exec: SqlExec, dialect: SqlDialect, table: string): Promise<TableFacts | undefined> {
  return dialect.engine === 'postgres' ? postgresTableFacts(exec, table) : sqliteTableFacts(exec, table);
}

export async function foreignKeys(exec: SqlExec, dialect: SqlDialect): Promise<ForeignKey[]> {
  if (dialect.engine === 'postgres') return postgresForeignKeys(exec);
  const keys: ForeignKey[] = [];
  for (const table of await catalogTables(exec, dialect)) {
    const rows = await exec.all(`select id, seq, "table" as parent, "from" as child_column, "to" as parent_column from pragma_foreign_key_list(?) order by id, seq`, [table]);
    const byId = new Map<number, ForeignKey>();
    for (const r of rows) {
      let key = byId.get(r.id as number);
      if (!key) byId.set(r.id as number, (key = { table, columns: [], references: r.parent as string, referencedColumns: [] }));
      key.columns.push(r.child_column as string);
      key.referencedColumns.push(r.parent_column as string);
    }
    keys.push(...byId.values());
  }
  return keys;
}

/** Tables ordered so that every table comes after the tables its foreign keys point at. */
export function parentsFirst(tables: readonly string[], keys: readonly ForeignKey[]): string[] {
  const known = new Set(tables);
  const ordered: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (table: string): void => {
    if (state.get(table) !== undefined) return;
    state.set(table, 'visiting');
    for (const key of keys) if (key.table === table && key.references !== table && known.has(key.references)) visit(key.references);
    state.set(table, 'done');
    ordered.push(table);
  };
  for (const table of [...tables].sort()) visit(table);
  return ordered;
}

async function sqliteTableFacts(exec: SqlExec, table: string): Promise<TableFacts | undefined> {
  const info = await exec.all('select name, type, "notnull" as not_null, dflt_value, pk from pragma_table_info(?) order by cid', [table]);
  if (info.length === 0) return undefined;
  const columns = info.map((c) => ({ name: c.name as string, notnull: c.not_null === 1, hasDefault: c.dflt_value !== null, integer: /INT/i.test(String(c.type)) }));
  const primaryKey = info.filter((c) => (c.pk as number) > 0).sort((a, b) => (a.pk as number) - (b.pk as number)).map((c) => c.name as string);
  const uniques: string[][] = [];
  for (const index of await exec.all('select name, "unique" as is_unique, origin, partial from pragma_index_list(?)', [table])) {
    if (index.is_unique !== 1 || index.origin === 'pk' || index.partial === 1) continue;
    const keyColumns = await exec.all('select name from pragma_index_info(?) order by seqno', [index.name as string]);
    if (keyColumns.some((c) => c.name === null)) continue;
    uniques.push(keyColumns.map((c) => c.name as string));
  }
  return { name: table, columns, primaryKey, uniques };
}

const POSTGRES_INTEGER = new Set(['bigint', 'integer', 'smallint']);

async function postgresTableFacts(exec: SqlExec, table: string): Promise<TableFacts | undefined> {
  const info = await exec.all(
    `select column_name, data_type, is_nullable, column_default, is_identity from information_schema.columns
      where table_schema = current_schema() and table_name = ? order by ordinal_position`,
    [table],
  );
  if (info.length === 0) return undefined;
  const columns = info.map((c) => ({
    name: c.column_name as string,
    notnull: c.is_nullable === 'NO',
    // An identity column numbers itself but has no default in SQLite's sense (the key is given or taken).
    hasDefault: c.column_default !== null,
    integer: POSTGRES_INTEGER.has(String(c.data_type)),
  }));
  const indexes = await exec.all(
    `select i.indisprimary as is_primary,
            (select string_agg(a.attname, ',' order by k.n)
               from unnest(i.indkey) with ordinality as k(attnum, n)
               join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum) as key_columns,
            case when i.indexprs is null and i.indpred is null then 1 else 0 end as plain
       from pg_index i join pg_class t on t.oid = i.indrelid join pg_namespace s on s.oid = t.relnamespace
      where s.nspname = current_schema() and t.relname = ? and i.indisunique
      order by i.indexrelid`,
    [table],
  );
  const primary = indexes.find((i) => i.is_primary === true);
  const uniques = indexes.filter((i) => i.is_primary !== true && i.plain === 1 && i.key_columns).map((i) => String(i.key_columns).split(','));
  return { name: table, columns, primaryKey: primary ? String(primary.key_columns).split(',') : [], uniques };
}

async function postgresForeignKeys(exec: SqlExec): Promise<ForeignKey[]> {
  const rows = await exec.all(
    `select c.oid as id, child.relname as child_table, parent.relname as parent_table, k.n,
            (select attname from pg_attribute where attrelid = c.conrelid and attnum = k.child_column) as child_column,
            (select attname from pg_attribute where attrelid = c.confrelid and attnum = c.confkey[k.n]) as parent_column
       from pg_constraint c
       join pg_class child on child.oid = c.conrelid
       join pg_class parent on parent.oid = c.confrelid
       join pg_namespace s on s.oid = child.relnamespace
       cross join lateral unnest(c.conkey) with ordinality as k(child_column, n)
      where c.contype = 'f' and s.nspname = current_schema()
      order by child.relname, c.oid, k.n`,
  );
  const byId = new Map<number, ForeignKey>();
  for (const r of rows) {
    let key = byId.get(r.id as number);
    if (!key) byId.set(r.id as number, (key = { table: r.child_table as string, columns: [], references: r.parent_table as string, referencedColumns: [] }));
    key.columns.push(r.child_column as string);
    key.referencedColumns.push(r.parent_column as string);
  }
  return [...byId.values()];
}

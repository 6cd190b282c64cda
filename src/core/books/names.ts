// Authors, categories, tags, moods and comic people are shared rows looked up by exact name.
import type { Transaction } from 'kysely';
import type { DB } from '../store/db-types.ts';
import { searchKey } from '../text/search-key.ts';
import { isSqlExec, kyselyExec, type SqlExec } from '../store/sql-exec.ts';

export type NameTable = 'author' | 'category' | 'tag' | 'mood' | 'comic_character' | 'comic_team' | 'comic_location' | 'comic_creator';

/** Tables that store a search key (core/text/search-key.ts) beside the name. */
const KEY_COLUMN: Partial<Record<NameTable, string>> = { author: 'name_key' };

interface NameStatements {
  find: string;
  add: string;
  /** Adds the name unless a row has it already (another transaction may have just added it): no id then. */
  addIfAbsent: string;
  rename: string;
}

const statements = new Map<NameTable, NameStatements>();

function statementsFor(table: NameTable): NameStatements {
  let sql = statements.get(table);
  if (!sql) {
    const key = KEY_COLUMN[table];
    const insert = key ? `insert into ${table} (name, ${key}) values (?, ?)` : `insert into ${table} (name) values (?)`;
    sql = {
      find: `select id from ${table} where name = ?`,
      add: `${insert} returning id`,
      addIfAbsent: `${insert} on conflict (name) do nothing returning id`,
      rename: key ? `update ${table} set name = ?, ${key} = ? where id = ?` : `update ${table} set name = ? where id = ?`,
    };
    statements.set(table, sql);
  }
  return sql;
}

const withKey = (table: NameTable, name: string): string[] => (KEY_COLUMN[table] ? [name, searchKey(name)] : [name]);

/** A new row for the name; its id. */
export async function addName(exec: SqlExec, table: NameTable, name: string): Promise<number> {
  return (await exec.get(statementsFor(table).add, withKey(table, name)))?.id as number;
}

/** Gives the row another spelling (its search key follows). */
export async function renameName(exec: SqlExec, table: NameTable, id: number, name: string): Promise<void> {
  await exec.run(statementsFor(table).rename, [...withKey(table, name), id]);
}

/**
 * Ids for the names, creating missing rows; order follows `names`. Runs inside the caller's write transaction. On
 * PostgreSQL another process may add the same name between the lookup and the insert: the insert then does nothing
 * (after waiting for that transaction to commit) and the lookup is repeated, seeing its row.
 */
export async function nameIds(db: Transaction<DB> | SqlExec, table: NameTable, names: string[]): Promise<number[]> {
  if (names.length === 0) return [];
  const exec = isSqlExec(db) ? db : kyselyExec(db);
  const sql = statementsFor(table);
  const ids: number[] = [];
  for (const name of names) {
    const found = ((await exec.get(sql.find, [name])) ?? (await exec.get(sql.addIfAbsent, withKey(table, name))) ?? (await exec.get(sql.find, [name])))?.id;
    ids.push(found as number);
  }
  return ids;
}

// Authors, categories, tags, moods and comic people are shared rows looked up by exact name.
import type { Transaction } from 'kysely';
import type { DB } from '../store/db-types.ts';
import { isSqlExec, kyselyExec, type SqlExec } from './sql-exec.ts';

export type NameTable = 'author' | 'category' | 'tag' | 'mood' | 'comic_character' | 'comic_team' | 'comic_location' | 'comic_creator';

const statements = new Map<NameTable, { find: string; add: string }>();

/**
 * Ids for the names, creating missing rows; order follows `names`. Runs inside the caller's write transaction, so a
 * name looked up and not found cannot be added by someone else before the insert.
 */
export async function nameIds(db: Transaction<DB> | SqlExec, table: NameTable, names: string[]): Promise<number[]> {
  if (names.length === 0) return [];
  const exec = isSqlExec(db) ? db : kyselyExec(db);
  let sql = statements.get(table);
  if (!sql) {
    sql = { find: `select id from ${table} where name = ?`, add: `insert into ${table} (name) values (?) returning id` };
    statements.set(table, sql);
  }
  const ids: number[] = [];
  for (const name of names) {
    const row = (await exec.get(sql.find, [name])) ?? (await exec.get(sql.add, [name]));
    ids.push(row?.id as number);
  }
  return ids;
}

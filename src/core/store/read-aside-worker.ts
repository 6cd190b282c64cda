// Worker-thread entry of Store.readAside on SQLite: its own read-only connection to the catalog file, so a statement
// over the whole catalog runs beside the thread that answers requests (WAL lets it read while the main connection
// reads and writes).
import Database from 'better-sqlite3';
import { workerData } from 'node:worker_threads';
import type { SqlRow, SqlValue } from './sql-exec.ts';

export interface ReadAsideTask {
  sql: string;
  params: readonly SqlValue[];
}

const { path, busyTimeoutMs } = workerData as { path: string; busyTimeoutMs: number };
const STATEMENTS_KEPT = 32;

let connection: Database.Database | undefined;
const statements = new Map<string, Database.Statement>();

function opened(): Database.Database {
  if (!connection) {
    connection = new Database(path, { readonly: true, fileMustExist: true });
    connection.pragma(`busy_timeout = ${busyTimeoutMs}`);
    connection.pragma('cache_size = -4000');
    connection.pragma('temp_store = MEMORY');
  }
  return connection;
}

function prepared(sql: string): Database.Statement {
  let statement = statements.get(sql);
  if (!statement) {
    statement = opened().prepare(sql);
    if (!statement.reader) throw new Error('Store.readAside runs only statements that return rows');
    if (statements.size >= STATEMENTS_KEPT) statements.delete(statements.keys().next().value as string);
    statements.set(sql, statement);
  }
  return statement;
}

export default function run(task: ReadAsideTask): SqlRow[] {
  return prepared(task.sql).all(...task.params) as SqlRow[];
}

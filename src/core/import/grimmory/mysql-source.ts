// Reading a live Grimmory database over the MySQL protocol (MariaDB or MySQL). Rows stream from the server, so a
// large table never sits in memory; timestamps come back as the server's text, not as local-time Date objects.
import { ImportError, type GrimmorySource, type SourceRow, type SourceSchema } from './source.ts';

export interface MysqlTarget {
  host: string;
  port: number;
  user: string;
  database: string;
  password?: string;
  socketPath?: string;
}

/** `mysql://user@host:3306/db` (or `mariadb://…`; `?socket=/path` for a Unix socket) → connection settings. */
export function parseMysqlUrl(url: string): MysqlTarget {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ImportError('INVALID_ARGUMENT', `--from must be a URL like mysql://user@host:3306/grimmory, not "${url}"`);
  }
  if (parsed.protocol !== 'mysql:' && parsed.protocol !== 'mariadb:') throw new ImportError('INVALID_ARGUMENT', `--from must start with mysql:// or mariadb://, not ${parsed.protocol}//`);
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  if (!database) throw new ImportError('INVALID_ARGUMENT', 'the --from URL must name the database: mysql://user@host:3306/grimmory');
  return {
    host: parsed.hostname || '127.0.0.1',
    port: parsed.port ? Number(parsed.port) : 3306,
    user: decodeURIComponent(parsed.username || 'root'),
    database,
    password: parsed.password ? decodeURIComponent(parsed.password) : undefined,
    socketPath: parsed.searchParams.get('socket') ?? undefined,
  };
}

export async function openMysqlSource(target: MysqlTarget): Promise<GrimmorySource> {
  const mysql = await import('mysql2');
  const connection = mysql.createConnection({
    host: target.host,
    port: target.port,
    user: target.user,
    password: target.password,
    database: target.database,
    socketPath: target.socketPath,
    dateStrings: true,
    supportBigNumbers: true,
    bigNumberStrings: false,
    timezone: 'Z',
    charset: 'utf8mb4',
  });
  const label = `mysql://${target.user}@${target.socketPath ?? `${target.host}:${target.port}`}/${target.database}`;
  await new Promise<void>((resolve, reject) => {
    connection.connect((error) => (error ? reject(new ImportError('SOURCE_UNREACHABLE', `cannot connect to ${label}: ${error.message}`)) : resolve()));
  });
  // Session in UTC, so TIMESTAMP columns read as the UTC instants Grimmory wrote; a consistent snapshot for all reads.
  const run = (sql: string): Promise<void> =>
    new Promise((resolve, reject) => connection.query(sql, (error) => (error ? reject(new ImportError('SOURCE_UNREACHABLE', `${label}: ${error.message}`)) : resolve())));
  await run("SET time_zone = '+00:00'");
  await run('SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ');
  await run('START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY');

  return {
    label,
    async schema(): Promise<SourceSchema> {
      const rows = await new Promise<{ t: string; c: string; d: string }[]>((resolve, reject) =>
        connection.query('select table_name as t, column_name as c, data_type as d from information_schema.columns where table_schema = database() order by table_name, ordinal_position', (error, result) =>
          error ? reject(new ImportError('SOURCE_UNREACHABLE', `${label}: ${error.message}`)) : resolve(result as { t: string; c: string; d: string }[]),
        ),
      );
      const schema: SourceSchema = new Map();
      for (const { t, c, d } of rows) {
        let table = schema.get(t);
        if (!table) schema.set(t, (table = new Map()));
        table.set(c, d.toLowerCase());
      }
      return schema;
    },
    async *rows(table: string): AsyncIterable<SourceRow> {
      const stream = connection.query(`select * from \`${table.replace(/`/g, '``')}\``).stream({ highWaterMark: 256 });
      for await (const row of stream) yield row as SourceRow;
    },
    count: (table) =>
      new Promise((resolve, reject) =>
        connection.query(`select count(*) as n from \`${table.replace(/`/g, '``')}\``, (error, result) =>
          error ? reject(new ImportError('SOURCE_UNREACHABLE', `${label}: ${error.message}`)) : resolve(Number((result as { n: number }[])[0]?.n ?? 0)),
        ),
      ),
    close: () => new Promise<void>((resolve) => connection.end(() => resolve())),
  };
}

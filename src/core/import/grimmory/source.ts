// A Grimmory database to read from: a live MariaDB/MySQL server or a mysqldump file. Both give the same thing: the
// tables with their column types, and each table's rows as plain objects (numbers, strings, null; timestamps as
// MariaDB writes them, `YYYY-MM-DD HH:MM:SS`).
import { CodedError } from '../../coded-error.ts';

export type SourceRow = Record<string, string | number | null>;

/** Column name → SQL type name (`bigint`, `varchar`, `datetime`, …), per table. */
export type SourceSchema = Map<string, Map<string, string>>;

export interface GrimmorySource {
  /** What to call it in reports and in the id map: `mysql://host:port/db` or the dump's file name. */
  readonly label: string;
  schema(): Promise<SourceSchema>;
  rows(table: string): AsyncIterable<SourceRow>;
  /** How many rows a table holds. */
  count(table: string): Promise<number>;
  close(): Promise<void>;
}

export type ImportErrorCode = 'SOURCE_UNREACHABLE' | 'SOURCE_INVALID' | 'UNSUPPORTED_SCHEMA' | 'PATH_NOT_FOUND' | 'INVALID_ARGUMENT';

export class ImportError extends CodedError<ImportErrorCode> {}

/** The Flyway version of the final schema described in the interface facts (V1 … V144). */
export const SUPPORTED_SCHEMA_VERSION = '144';

function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** The highest successfully applied Flyway migration, from `flyway_schema_history` rows. */
export function schemaVersionOf(history: readonly SourceRow[]): string | undefined {
  let best: string | undefined;
  for (const row of history) {
    const version = row.version;
    if (version === null || version === undefined || String(version).trim() === '') continue;
    if (row.success !== undefined && row.success !== null && Number(row.success) !== 1) continue;
    const v = String(version).trim();
    if (!best || compareVersions(v, best) > 0) best = v;
  }
  return best;
}

/** Refuses any schema but the one this importer knows, naming what it found. */
export async function checkSchemaVersion(source: GrimmorySource, schema: SourceSchema): Promise<string> {
  if (!schema.has('flyway_schema_history')) {
    throw new ImportError('UNSUPPORTED_SCHEMA', `${source.label} has no flyway_schema_history table: this is not a Grimmory (or Booklore) database`);
  }
  const history: SourceRow[] = [];
  for await (const row of source.rows('flyway_schema_history')) history.push(row);
  const version = schemaVersionOf(history);
  if (!version) throw new ImportError('UNSUPPORTED_SCHEMA', `${source.label}: flyway_schema_history lists no applied migration`);
  const order = compareVersions(version, SUPPORTED_SCHEMA_VERSION);
  if (order > 0) {
    throw new ImportError('UNSUPPORTED_SCHEMA', `Grimmory schema version ${version} is newer than the one this Bindery knows (${SUPPORTED_SCHEMA_VERSION}); nothing was imported`);
  }
  if (order < 0) {
    throw new ImportError('UNSUPPORTED_SCHEMA', `Grimmory schema version ${version} is older than the one this Bindery reads (${SUPPORTED_SCHEMA_VERSION}); start the latest Grimmory once so it migrates its database, then import`);
  }
  return version;
}

/** MariaDB `YYYY-MM-DD HH:MM:SS[.ffffff]` (UTC) → ISO-8601 with milliseconds; `date` values stay `YYYY-MM-DD`. */
export function instantFromSql(value: string | number | null, type: string): string | null {
  if (value === null || typeof value === 'number') return value === null ? null : String(value);
  if (value.startsWith('0000-00-00')) return null;
  if (type === 'date') return value.slice(0, 10);
  const match = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.(\d+))?/.exec(value);
  if (!match) return value;
  const millis = (match[3] ?? '').padEnd(3, '0').slice(0, 3);
  return `${match[1]}T${match[2]}.${millis}Z`;
}

export const TIME_TYPES: ReadonlySet<string> = new Set(['datetime', 'timestamp', 'date']);

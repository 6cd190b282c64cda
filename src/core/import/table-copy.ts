// Copying one source table into the catalog table of the same shape, row by row: columns both sides know are carried
// over, references go through the id map, a row an earlier run brought over is left alone, and a row that meets one
// already in the catalog (same user name, same tag, …) is joined to it instead of duplicated.
import type { SqlDialect } from '../store/dialect.ts';
import { syncIdSequence } from '../store/id-sequences.ts';
import { quoteName, tableFacts } from '../store/schema-facts.ts';
import type { SqlValue } from '../store/sql-exec.ts';
import type { WriteScope } from '../store/store.ts';
import type { IdMap, TargetId } from './id-map.ts';
import { emptyTableReport, recordSkip, type TableReport } from './import-report.ts';

export type Value = string | number | null;
export type Row = Record<string, Value>;

interface TargetColumn {
  notnull: boolean;
  hasDefault: boolean;
  integer: boolean;
}

export interface TargetTable {
  name: string;
  columns: Map<string, TargetColumn>;
  /** Column sets of the unique indexes that are not the primary key. */
  uniques: string[][];
  /** `id` column: integer (auto-numbered) or text (kept as given); undefined when the table has none. */
  id: 'integer' | 'text' | undefined;
}

export async function describeTarget(scope: WriteScope, dialect: SqlDialect, table: string): Promise<TargetTable> {
  const facts = await tableFacts(scope.exec, dialect, table);
  if (!facts) throw new Error(`the catalog has no table ${table}`);
  const columns = new Map<string, TargetColumn>();
  for (const c of facts.columns) columns.set(c.name, { notnull: c.notnull, hasDefault: c.hasDefault, integer: c.integer });
  const idColumn = facts.primaryKey.length === 1 && facts.primaryKey[0] === 'id' ? columns.get('id') : undefined;
  return { name: table, columns, uniques: facts.uniques, id: idColumn ? (idColumn.integer ? 'integer' : 'text') : undefined };
}

/** Why a row is not brought over; it is reported with the example (the source id unless given). */
export class Skip {
  readonly reason: string;
  readonly example: string | undefined;
  constructor(reason: string, example?: string) {
    this.reason = reason;
    this.example = example;
  }
}

export type Prepared = Row | Skip;

export interface CopySpec {
  /** The source table; also the catalog table unless `target` names another. */
  table: string;
  target?: string;
  /** Source column → id-map kind of the row it points at. A row whose reference was not imported is skipped. */
  refs?: Record<string, string>;
  /** References that become null when the row they point at was not imported, instead of skipping the row. */
  optionalRefs?: Record<string, string>;
  /** Source columns never copied as they are (set by `prepare`, or deliberately left out). */
  exclude?: readonly string[];
  /** Why source columns the catalog lacks are not carried (reported); a generic reason otherwise. */
  droppedReason?: string;
  /** `update`: a row meeting an existing catalog row overwrites it (settings); `join` (default) leaves it. */
  onExisting?: 'join' | 'update';
  /** Keep the source id when the catalog has no row with it (default true): devices and links that know ids keep working. */
  keepIds?: boolean;
  prepare?(row: Row, source: Row): Prepared | Promise<Prepared>;
  /** Called for each row written for the first time, with its catalog id. */
  imported?(source: Row, targetId: TargetId): void;
}

export interface CopyContext {
  /** The transaction rows are written in. */
  scope: WriteScope;
  dialect: SqlDialect;
  ids: IdMap;
  /** Source column types per table, for timestamps. */
  sourceColumns: Map<string, string>;
  convertTime(value: Value, type: string): Value;
}

/** The id-map kind of a table's rows: its name. */
export const kindOf = (spec: CopySpec): string => spec.table;

export class TableCopier {
  readonly report: TableReport;
  readonly dropped: string[];
  private readonly target: TargetTable;
  private readonly copied: string[];
  private readonly refs: [string, string, boolean][];
  private readonly sourceHasId: boolean;
  private readonly spec: CopySpec;
  private readonly ctx: CopyContext;
  /** Rows went in with their own ids since the id sequence was last brought up to them (PostgreSQL). */
  private idsGivenSinceSync = false;

  static async create(spec: CopySpec, ctx: CopyContext): Promise<TableCopier> {
    return new TableCopier(spec, ctx, await describeTarget(ctx.scope, ctx.dialect, spec.target ?? spec.table));
  }

  private constructor(spec: CopySpec, ctx: CopyContext, target: TargetTable) {
    this.spec = spec;
    this.ctx = ctx;
    this.target = target;
    this.report = emptyTableReport(spec.table);
    const exclude = new Set(['id', ...(spec.exclude ?? [])]);
    this.refs = [...Object.entries(spec.refs ?? {}).map(([c, k]) => [c, k, false] as [string, string, boolean]), ...Object.entries(spec.optionalRefs ?? {}).map(([c, k]) => [c, k, true] as [string, string, boolean])];
    const sourceNames = [...ctx.sourceColumns.keys()];
    this.copied = sourceNames.filter((c) => !exclude.has(c) && this.target.columns.has(c));
    this.dropped = sourceNames.filter((c) => !exclude.has(c) && !this.target.columns.has(c));
    this.sourceHasId = ctx.sourceColumns.has('id');
  }

  private insertSql(row: Row, tail: string): [string, SqlValue[]] {
    const columns = Object.keys(row);
    return [`insert into ${quoteName(this.target.name)} (${columns.map(quoteName).join(', ')}) values (${columns.map(() => '?').join(', ')}) ${tail}`, Object.values(row)];
  }

  async copy(source: Row): Promise<void> {
    const { exec } = this.ctx.scope;
    const kind = kindOf(this.spec);
    const sourceId = this.sourceHasId ? source.id : undefined;
    const example = sourceId !== undefined && sourceId !== null ? `#${sourceId}` : JSON.stringify(source).slice(0, 80);
    if (this.target.id && sourceId !== undefined && (await this.ctx.ids.has(kind, sourceId))) {
      this.report.unchanged++;
      return;
    }
    let row: Row = {};
    for (const column of this.copied) {
      const type = this.ctx.sourceColumns.get(column) ?? '';
      row[column] = this.ctx.convertTime(source[column] ?? null, type);
    }
    for (const [column, refKind, optional] of this.refs) {
      const value = source[column];
      if (value === null || value === undefined) {
        row[column] = null;
        continue;
      }
      const mapped = await this.ctx.ids.get(refKind, value);
      if (mapped === undefined) {
        if (optional) row[column] = null;
        else {
          recordSkip(this.report, `its ${refKind.replace(/_/g, ' ')} (${column}) was not imported`, example);
          return;
        }
      } else row[column] = mapped;
    }
    if (this.spec.prepare) {
      const prepared = await this.spec.prepare(row, source);
      if (prepared instanceof Skip) {
        recordSkip(this.report, prepared.reason, prepared.example ?? example);
        return;
      }
      row = prepared;
    }
    for (const [column, value] of Object.entries(row)) {
      const target = this.target.columns.get(column);
      if (!target) delete row[column];
      else if (value === null && target.notnull && target.hasDefault) delete row[column];
    }

    if (!this.target.id || sourceId === undefined || sourceId === null) {
      const [sql, params] = this.insertSql(row, 'on conflict do nothing returning 1 as inserted');
      if (await exec.get(sql, params)) this.report.imported++;
      else this.report.unchanged++;
      return;
    }

    const existing = await this.existing(row);
    if (existing !== undefined) {
      if (this.spec.onExisting === 'update') {
        const columns = Object.keys(row);
        await exec.run(`update ${quoteName(this.target.name)} set ${columns.map((c) => `${quoteName(c)} = ?`).join(', ')} where id = ?`, [...Object.values(row), existing]);
        this.report.updated++;
      } else this.report.matched++;
      await this.ctx.ids.set(kind, sourceId, existing);
      return;
    }
    const keep = this.spec.keepIds !== false && (this.target.id === 'text' || !(await exec.get(`select 1 as taken from ${quoteName(this.target.name)} where id = ?`, [sourceId])));
    if (keep) {
      row = { id: sourceId, ...row };
      this.idsGivenSinceSync = true;
    } else if (this.idsGivenSinceSync) {
      await syncIdSequence(this.ctx.scope.db, this.target.name);
      this.idsGivenSinceSync = false;
    }
    const [sql, params] = this.insertSql(row, keep ? '' : 'returning id');
    const inserted = keep ? (await exec.run(sql, params), undefined) : await exec.get(sql, params);
    const targetId: TargetId = keep ? (sourceId as TargetId) : (inserted?.id as TargetId);
    await this.ctx.ids.set(kind, sourceId, targetId);
    this.report.imported++;
    this.spec.imported?.(source, targetId);
  }

  /** The catalog row this one would collide with on a unique index, if any. */
  private async existing(row: Row): Promise<TargetId | undefined> {
    for (const columns of this.target.uniques) {
      // As in SQL, a null never collides: a row without an e-mail meets no other row without one.
      if (!columns.every((c) => row[c] !== undefined && row[c] !== null)) continue;
      const found = await this.ctx.scope.exec.get(`select id from ${quoteName(this.target.name)} where ${columns.map((c) => `${quoteName(c)} = ?`).join(' and ')}`, columns.map((c) => row[c] as Value));
      if (found) return found.id as TargetId;
    }
    return undefined;
  }
}

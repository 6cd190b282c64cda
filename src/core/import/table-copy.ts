// Copying one source table into the catalog table of the same shape, row by row: columns both sides know are carried
// over, references go through the id map, a row an earlier run brought over is left alone, and a row that meets one
// already in the catalog (same user name, same tag, …) is joined to it instead of duplicated.
import type Database from 'better-sqlite3';
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

export function describeTarget(sqlite: Database.Database, table: string): TargetTable {
  const info = sqlite.prepare(`pragma table_info(${table})`).all() as { name: string; type: string; notnull: number; dflt_value: unknown; pk: number }[];
  if (info.length === 0) throw new Error(`the catalog has no table ${table}`);
  const columns = new Map<string, TargetColumn>();
  for (const c of info) columns.set(c.name, { notnull: c.notnull === 1, hasDefault: c.dflt_value !== null, integer: /INT/i.test(c.type) });
  const uniques: string[][] = [];
  for (const index of sqlite.prepare(`pragma index_list(${table})`).all() as { name: string; unique: number; origin: string; partial: number }[]) {
    if (!index.unique || index.origin === 'pk' || index.partial) continue;
    uniques.push((sqlite.prepare(`pragma index_info(${index.name})`).all() as { name: string }[]).map((c) => c.name));
  }
  const idColumn = info.find((c) => c.name === 'id' && c.pk === 1);
  return { name: table, columns, uniques, id: idColumn ? (/INT/i.test(idColumn.type) ? 'integer' : 'text') : undefined };
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
  prepare?(row: Row, source: Row): Prepared;
  /** Called for each row written for the first time, with its catalog id. */
  imported?(source: Row, targetId: TargetId): void;
}

export interface CopyContext {
  sqlite: Database.Database;
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
  private readonly statements = new Map<string, Database.Statement>();
  private readonly sourceHasId: boolean;
  private readonly spec: CopySpec;
  private readonly ctx: CopyContext;

  constructor(spec: CopySpec, ctx: CopyContext) {
    this.spec = spec;
    this.ctx = ctx;
    this.target = describeTarget(ctx.sqlite, spec.target ?? spec.table);
    this.report = emptyTableReport(spec.table);
    const exclude = new Set(['id', ...(spec.exclude ?? [])]);
    this.refs = [...Object.entries(spec.refs ?? {}).map(([c, k]) => [c, k, false] as [string, string, boolean]), ...Object.entries(spec.optionalRefs ?? {}).map(([c, k]) => [c, k, true] as [string, string, boolean])];
    const sourceNames = [...ctx.sourceColumns.keys()];
    this.copied = sourceNames.filter((c) => !exclude.has(c) && this.target.columns.has(c));
    this.dropped = sourceNames.filter((c) => !exclude.has(c) && !this.target.columns.has(c));
    this.sourceHasId = ctx.sourceColumns.has('id');
  }

  private statement(sql: string): Database.Statement {
    let s = this.statements.get(sql);
    if (!s) this.statements.set(sql, (s = this.ctx.sqlite.prepare(sql)));
    return s;
  }

  copy(source: Row): void {
    const kind = kindOf(this.spec);
    const sourceId = this.sourceHasId ? source.id : undefined;
    const example = sourceId !== undefined && sourceId !== null ? `#${sourceId}` : JSON.stringify(source).slice(0, 80);
    if (this.target.id && sourceId !== undefined && this.ctx.ids.has(kind, sourceId)) {
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
      const mapped = this.ctx.ids.get(refKind, value);
      if (mapped === undefined) {
        if (optional) row[column] = null;
        else {
          recordSkip(this.report, `its ${refKind.replace(/_/g, ' ')} (${column}) was not imported`, example);
          return;
        }
      } else row[column] = mapped;
    }
    if (this.spec.prepare) {
      const prepared = this.spec.prepare(row, source);
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
      const columns = Object.keys(row);
      const info = this.statement(`insert or ignore into ${this.target.name} (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`).run(...Object.values(row));
      if (info.changes > 0) this.report.imported++;
      else this.report.unchanged++;
      return;
    }

    const existing = this.existing(row);
    if (existing !== undefined) {
      if (this.spec.onExisting === 'update') {
        const columns = Object.keys(row);
        this.statement(`update ${this.target.name} set ${columns.map((c) => `${c} = ?`).join(', ')} where id = ?`).run(...Object.values(row), existing);
        this.report.updated++;
      } else this.report.matched++;
      this.ctx.ids.set(kind, sourceId, existing);
      return;
    }
    const keep = this.spec.keepIds !== false && (this.target.id === 'text' || !this.statement(`select 1 from ${this.target.name} where id = ?`).get(sourceId));
    if (keep) row = { id: sourceId, ...row };
    const columns = Object.keys(row);
    const info = this.statement(`insert into ${this.target.name} (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`).run(...Object.values(row));
    const targetId: TargetId = keep ? (sourceId as TargetId) : Number(info.lastInsertRowid);
    this.ctx.ids.set(kind, sourceId, targetId);
    this.report.imported++;
    this.spec.imported?.(source, targetId);
  }

  /** The catalog row this one would collide with on a unique index, if any. */
  private existing(row: Row): TargetId | undefined {
    for (const columns of this.target.uniques) {
      // As in SQL, a null never collides: a row without an e-mail meets no other row without one.
      if (!columns.every((c) => row[c] !== undefined && row[c] !== null)) continue;
      const found = this.statement(`select id from ${this.target.name} where ${columns.map((c) => `${c} = ?`).join(' and ')}`)
        .get(...columns.map((c) => row[c])) as { id: TargetId } | undefined;
      if (found) return found.id;
    }
    return undefined;
  }
}

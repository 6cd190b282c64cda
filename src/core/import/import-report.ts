// What an import did, or would do on a dry run, table by table: counts, and the rows it could not bring over with why.
export interface SkipReason {
  reason: string;
  count: number;
  /** A few source ids (or paths) of the skipped rows, to look them up. */
  examples: string[];
}

export interface TableReport {
  table: string;
  /** New rows written to the catalog. */
  imported: number;
  /** Rows an earlier run brought over already. */
  unchanged: number;
  /** Rows that met a catalog row that was already there (same user name, tag, …) and were joined to it. */
  matched: number;
  /** Rows that changed a catalog row they had already been imported into (a re-run that picks up changes). */
  updated: number;
  skipped: SkipReason[];
}

export interface NotImported {
  table: string;
  rows: number;
  reason: string;
}

export interface DroppedFields {
  table: string;
  fields: string[];
  reason: string;
}

export interface StageReport {
  stage: string;
  tables: TableReport[];
}

export const EXAMPLES_KEPT = 5;

export function emptyTableReport(table: string): TableReport {
  return { table, imported: 0, unchanged: 0, matched: 0, updated: 0, skipped: [] };
}

export function recordSkip(report: TableReport, reason: string, example: string): void {
  let entry = report.skipped.find((s) => s.reason === reason);
  if (!entry) {
    entry = { reason, count: 0, examples: [] };
    report.skipped.push(entry);
  }
  entry.count++;
  if (entry.examples.length < EXAMPLES_KEPT) entry.examples.push(example);
}

export function skippedCount(stages: readonly StageReport[]): number {
  return stages.reduce((sum, s) => sum + s.tables.reduce((t, r) => t + r.skipped.reduce((n, k) => n + k.count, 0), 0), 0);
}

/** One line per table, for a terminal: `book: 120 imported, 3 skipped (file not on disk: 3)`. */
export function describeTable(report: TableReport): string {
  const parts: string[] = [];
  if (report.imported) parts.push(`${report.imported} imported`);
  if (report.updated) parts.push(`${report.updated} updated`);
  if (report.matched) parts.push(`${report.matched} joined to existing rows`);
  if (report.unchanged) parts.push(`${report.unchanged} unchanged`);
  const skipped = report.skipped.reduce((n, s) => n + s.count, 0);
  if (skipped) parts.push(`${skipped} skipped (${report.skipped.map((s) => `${s.reason}: ${s.count}, e.g. ${s.examples.slice(0, 2).join(', ')}`).join('; ')})`);
  return `${report.table}: ${parts.length ? parts.join(', ') : 'nothing'}`;
}

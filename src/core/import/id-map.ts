// Which catalog row each source row became, per source and kind (`book`, `users`, …), kept in import_id_map. Kinds
// other rows point at are held in memory once read; the rest (annotations, sessions: the bulk) are looked up row by
// row, so memory does not grow with them.
import type { SqlExec } from '../store/sql-exec.ts';

export type TargetId = number | string;

const targetId = (text: string): TargetId => (/^-?\d+$/.test(text) ? Number(text) : text);

export class IdMap {
  private readonly loaded = new Map<string, Map<string, TargetId>>();
  private readonly source: string;
  private readonly cached: ReadonlySet<string> | undefined;
  private exec: SqlExec | undefined;

  /** `cached`: the kinds to hold in memory (all when not given). */
  constructor(source: string, cached?: ReadonlySet<string>) {
    this.source = source;
    this.cached = cached;
  }

  /** The transaction lookups and records go through from now on (an import writes in one or several). */
  bind(exec: SqlExec): this {
    this.exec = exec;
    return this;
  }

  private get sql(): SqlExec {
    if (!this.exec) throw new Error('the id map is used outside a transaction');
    return this.exec;
  }

  private async kind(kind: string): Promise<Map<string, TargetId>> {
    let map = this.loaded.get(kind);
    if (!map) {
      map = new Map();
      for (const row of await this.sql.all('select source_id, target_id from import_id_map where source = ? and kind = ?', [this.source, kind])) {
        map.set(row.source_id as string, targetId(row.target_id as string));
      }
      this.loaded.set(kind, map);
    }
    return map;
  }

  private isCached(kind: string): boolean {
    return !this.cached || this.cached.has(kind);
  }

  async get(kind: string, sourceId: unknown): Promise<TargetId | undefined> {
    if (sourceId === null || sourceId === undefined) return undefined;
    if (this.isCached(kind)) return (await this.kind(kind)).get(String(sourceId));
    const row = await this.sql.get('select target_id from import_id_map where source = ? and kind = ? and source_id = ?', [this.source, kind, String(sourceId)]);
    return row === undefined ? undefined : targetId(row.target_id as string);
  }

  async has(kind: string, sourceId: unknown): Promise<boolean> {
    return (await this.get(kind, sourceId)) !== undefined;
  }

  async set(kind: string, sourceId: unknown, target: TargetId, sourceVersion: string | null = null): Promise<void> {
    if (this.isCached(kind)) (await this.kind(kind)).set(String(sourceId), target);
    await this.sql.run(
      `insert into import_id_map (source, kind, source_id, target_id, source_version) values (?, ?, ?, ?, ?)
       on conflict (source, kind, source_id) do update set target_id = excluded.target_id, source_version = excluded.source_version`,
      [this.source, kind, String(sourceId), String(target), sourceVersion],
    );
  }

  /** Forgets what was read, after a rolled-back transaction made it untrue. */
  reset(): void {
    this.loaded.clear();
  }
}

// Which catalog row each source row became, per source and kind (`book`, `users`, …), kept in import_id_map.
import type Database from 'better-sqlite3';

export type TargetId = number | string;

export class IdMap {
  private readonly loaded = new Map<string, Map<string, TargetId>>();
  private readonly insert: Database.Statement;
  private readonly select: Database.Statement;

  private readonly source: string;

  constructor(sqlite: Database.Database, source: string) {
    this.source = source;
    this.insert = sqlite.prepare('insert or replace into import_id_map (source, kind, source_id, target_id, source_version) values (?, ?, ?, ?, ?)');
    this.select = sqlite.prepare('select source_id, target_id from import_id_map where source = ? and kind = ?');
  }

  private kind(kind: string): Map<string, TargetId> {
    let map = this.loaded.get(kind);
    if (!map) {
      map = new Map();
      for (const row of this.select.iterate(this.source, kind) as Iterable<{ source_id: string; target_id: string }>) {
        map.set(row.source_id, /^-?\d+$/.test(row.target_id) ? Number(row.target_id) : row.target_id);
      }
      this.loaded.set(kind, map);
    }
    return map;
  }

  get(kind: string, sourceId: unknown): TargetId | undefined {
    if (sourceId === null || sourceId === undefined) return undefined;
    return this.kind(kind).get(String(sourceId));
  }

  has(kind: string, sourceId: unknown): boolean {
    return this.get(kind, sourceId) !== undefined;
  }

  set(kind: string, sourceId: unknown, targetId: TargetId, sourceVersion: string | null = null): void {
    this.kind(kind).set(String(sourceId), targetId);
    this.insert.run(this.source, kind, String(sourceId), String(targetId), sourceVersion);
  }

  /** Every source id of a kind with the row it became. */
  entries(kind: string): IterableIterator<[string, TargetId]> {
    return this.kind(kind).entries();
  }

  /** Forgets what was read, after a rolled-back transaction made it untrue. */
  reset(): void {
    this.loaded.clear();
  }
}

// Which catalog row each source row became, per source and kind (`book`, `users`, …), kept in import_id_map. Kinds
// other rows point at are held in memory once read; the rest (annotations, sessions: the bulk) are looked up row by
// row, so memory does not grow with them.
import type Database from 'better-sqlite3';

export type TargetId = number | string;

const targetId = (text: string): TargetId => (/^-?\d+$/.test(text) ? Number(text) : text);

export class IdMap {
  private readonly loaded = new Map<string, Map<string, TargetId>>();
  private readonly insert: Database.Statement;
  private readonly select: Database.Statement;
  private readonly selectOne: Database.Statement;
  private readonly source: string;
  private readonly cached: ReadonlySet<string> | undefined;

  /** `cached`: the kinds to hold in memory (all when not given). */
  constructor(sqlite: Database.Database, source: string, cached?: ReadonlySet<string>) {
    this.source = source;
    this.cached = cached;
    this.selectOne = sqlite.prepare('select target_id from import_id_map where source = ? and kind = ? and source_id = ?');
    this.insert = sqlite.prepare('insert or replace into import_id_map (source, kind, source_id, target_id, source_version) values (?, ?, ?, ?, ?)');
    this.select = sqlite.prepare('select source_id, target_id from import_id_map where source = ? and kind = ?');
  }

  private kind(kind: string): Map<string, TargetId> {
    let map = this.loaded.get(kind);
    if (!map) {
      map = new Map();
      for (const row of this.select.iterate(this.source, kind) as Iterable<{ source_id: string; target_id: string }>) {
        map.set(row.source_id, targetId(row.target_id));
      }
      this.loaded.set(kind, map);
    }
    return map;
  }

  private isCached(kind: string): boolean {
    return !this.cached || this.cached.has(kind);
  }

  get(kind: string, sourceId: unknown): TargetId | undefined {
    if (sourceId === null || sourceId === undefined) return undefined;
    if (this.isCached(kind)) return this.kind(kind).get(String(sourceId));
    const row = this.selectOne.get(this.source, kind, String(sourceId)) as { target_id: string } | undefined;
    return row === undefined ? undefined : targetId(row.target_id);
  }

  has(kind: string, sourceId: unknown): boolean {
    return this.get(kind, sourceId) !== undefined;
  }

  set(kind: string, sourceId: unknown, targetId: TargetId, sourceVersion: string | null = null): void {
    if (this.isCached(kind)) this.kind(kind).set(String(sourceId), targetId);
    this.insert.run(this.source, kind, String(sourceId), String(targetId), sourceVersion);
  }

  /** Forgets what was read, after a rolled-back transaction made it untrue. */
  reset(): void {
    this.loaded.clear();
  }
}

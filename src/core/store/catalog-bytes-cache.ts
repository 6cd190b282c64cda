// Whole serialized answers derived from the catalog (the JSON of a page of books, of one book), kept until anything in
// the catalog changes and bounded by their total size.
import type Database from 'better-sqlite3';
import { catalogGeneration, sameGeneration, writeInFlight, type Generation } from './snapshot.ts';

const ENTRY_OVERHEAD = 200;

export class CatalogBytesCache {
  private readonly entries = new Map<string, { value: Buffer; bytes: number }>();
  private generation: Generation | undefined;
  private bytes = 0;
  private readonly maxBytes: number;
  private readonly maxEntryBytes: number;

  /** At most `maxBytes` in all (least recently used dropped first); a single answer larger than `maxEntryBytes` is not kept. */
  constructor(maxBytes: number, maxEntryBytes = Math.floor(maxBytes / 16)) {
    this.maxBytes = maxBytes;
    this.maxEntryBytes = maxEntryBytes;
  }

  /** Bytes held now (for tests and figures). */
  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }

  /**
   * The bytes kept under `key`, or those `compute` makes, kept for next time. Call it inside `readSnapshot`: the
   * catalog's generation is then read in the same read transaction as everything `compute` reads, so what is kept is
   * exactly the state it is filed under. A change anywhere in the catalog (a commit by another connection or process,
   * any row this connection writes) empties the cache: everything in it was derived from the old state. What is
   * computed while a write transaction is open on the connection is not kept (it may yet roll back).
   */
  get(sqlite: Database.Database, key: string, compute: () => string): Buffer {
    const generation = catalogGeneration(sqlite);
    if (!this.generation || !sameGeneration(this.generation, generation)) {
      this.clear();
      this.generation = generation;
    }
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit.value;
    }
    const text = compute();
    const length = Buffer.byteLength(text, 'utf8');
    if (writeInFlight(sqlite) || length > this.maxEntryBytes) return Buffer.from(text, 'utf8');
    // A buffer of its own: a small Buffer.from would share (and keep alive) an 8 KB slab of Node's buffer pool.
    const value = Buffer.allocUnsafeSlow(length);
    value.write(text, 'utf8');
    this.remember(key, value);
    return value;
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  private remember(key: string, value: Buffer): void {
    // The entry's own objects (Map slot, key, Buffer) count too, roughly.
    const bytes = value.length + key.length * 2 + ENTRY_OVERHEAD;
    this.entries.set(key, { value, bytes });
    this.bytes += bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= entry.bytes;
    }
  }
}

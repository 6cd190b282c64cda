// Whole serialized answers derived from the catalog (the JSON of a page of books), kept until anything in the catalog
// changes and bounded by their total size. Kept as Buffers, outside V8's heap: as strings they made the heap, and the
// garbage collector's slack with it, grow by about twice their size.
import type Database from 'better-sqlite3';
import { catalogGeneration, sameGeneration, writeInFlight, type Generation } from './snapshot.ts';

/** A rough size of an entry's own objects (Map slot, key, Buffer). */
const ENTRY_OVERHEAD = 200;

export class CatalogBytesCache {
  private readonly entries = new Map<string, { value: Buffer; bytes: number }>();
  private generation: Generation | undefined;
  private bytes = 0;
  private readonly maxBytes: number;
  private readonly maxEntryBytes: number;

  /** At most `maxBytes` in all (least recently used dropped first); an answer larger than `maxEntryBytes` is not kept. */
  constructor(maxBytes: number, maxEntryBytes = Math.floor(maxBytes / 16)) {
    this.maxBytes = maxBytes;
    this.maxEntryBytes = maxEntryBytes;
  }

  /** What is held now (for tests and figures). */
  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }

  /**
   * The bytes kept under `key`, or the UTF-8 of the text `compute` makes, kept for next time. Call it inside
   * `readSnapshot`: the catalog's generation is then read in the same read transaction as everything `compute` reads,
   * so what is kept is exactly the state it is filed under. A change anywhere in the catalog (a commit by another
   * connection or process, any row this connection writes) empties the cache: everything in it was derived from the
   * old state. What is computed while a write transaction is open on the connection is not kept (it may yet roll back).
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
    const value = ownBuffer(compute());
    if (!writeInFlight(sqlite)) this.remember(key, value);
    return value;
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  private remember(key: string, value: Buffer): void {
    const bytes = value.length + key.length * 2 + ENTRY_OVERHEAD;
    if (bytes > this.maxEntryBytes) return;
    this.entries.set(key, { value, bytes });
    this.bytes += bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= entry.bytes;
    }
  }
}

/** UTF-8 in a buffer of its own: a small Buffer.from shares (and keeps alive) an 8 KB slab of Node's buffer pool. */
function ownBuffer(text: string): Buffer {
  if (text.length >= Buffer.poolSize) return Buffer.from(text, 'utf8');
  const value = Buffer.allocUnsafeSlow(Buffer.byteLength(text, 'utf8'));
  value.write(text, 'utf8');
  return value;
}

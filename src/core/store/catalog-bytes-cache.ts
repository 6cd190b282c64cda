// Whole serialized answers derived from the catalog (the JSON of a page of books), kept until anything in the catalog
// changes and bounded by their total size. Kept as Buffers, outside V8's heap: as strings they made the heap, and the
// garbage collector's slack with it, grow by about twice their size.
import { sameGeneration, type Generation, type GenerationSource } from './snapshot.ts';

/** A rough size of an entry's own objects (Map slot, key, Buffer). */
const ENTRY_OVERHEAD = 200;

export class CatalogBytesCache<Meta = undefined> {
  private readonly entries = new Map<string, { value: Buffer; bytes: number; meta: Meta | undefined; expires: number }>();
  private generation: Generation | undefined;
  private bytes = 0;
  private readonly maxBytes: number;
  private readonly maxEntryBytes: number;

  private readonly maxAgeMs: number;
  private readonly onExpired: (bytes: number) => void;
  private sweep: NodeJS.Timeout | undefined;

  /**
   * At most `maxBytes` in all (least recently used dropped first); an answer larger than `maxEntryBytes` is not kept;
   * none is served after `maxAgeMs`, for answers that also depend on the time of day (a feed's "recent" window).
   * Expired answers are dropped when they expire, and `onExpired` is told how many bytes went.
   */
  constructor(maxBytes: number, maxEntryBytes = Math.floor(maxBytes / 16), maxAgeMs = Infinity, onExpired: (bytes: number) => void = () => undefined) {
    this.maxBytes = maxBytes;
    this.maxEntryBytes = maxEntryBytes;
    this.maxAgeMs = maxAgeMs;
    this.onExpired = onExpired;
  }

  /** What is held now (for tests and figures). */
  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }

  /**
   * The bytes kept under `key`, or the UTF-8 of the text `compute` makes, kept for next time. Call it inside
   * `Store.read`: the catalog's generation is then read in the same read transaction as everything `compute` reads,
   * so what is kept is exactly the state it is filed under. A change anywhere in the catalog (a commit by another
   * connection or process, any row this connection writes) empties the cache: everything in it was derived from the
   * old state. What is computed while a write transaction is open on the connection is not kept (it may yet roll back).
   */
  get(source: GenerationSource, key: string, compute: () => string): Buffer {
    const hit = this.lookup(source, key);
    if (hit) return hit.value;
    const value = ownBuffer(compute());
    if (!source.writeInFlight()) this.remember(key, value, undefined);
    return value;
  }

  /**
   * The entry kept under `key` for the catalog as it is now, with the generation it was looked up at. For answers
   * computed asynchronously (outside one read transaction): pass that generation to `offer` with the answer.
   */
  lookup(source: GenerationSource, key: string): { value: Buffer; meta: Meta | undefined; generation: Generation } | undefined {
    const generation = source.generation();
    if (!this.generation || !sameGeneration(this.generation, generation)) {
      this.clear();
      this.generation = generation;
    }
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    this.entries.delete(key);
    if (hit.expires < performance.now()) {
      this.bytes -= hit.bytes;
      return undefined;
    }
    this.entries.set(key, hit);
    return { value: hit.value, meta: hit.meta, generation };
  }

  /** The generation to hand to `offer` later: none while a write transaction is open (nothing read then is kept). */
  generationNow(source: GenerationSource): Generation | undefined {
    return source.writeInFlight() ? undefined : source.generation();
  }

  /**
   * Keeps an answer computed since `since` (from `generationNow`), only when the catalog is still at that generation
   * and no write is open: every read made in between then saw that one state. Returns the bytes kept, if kept.
   */
  offer(source: GenerationSource, key: string, since: Generation, value: Buffer | string, meta?: Meta): Buffer | undefined {
    if (source.writeInFlight() || !sameGeneration(since, source.generation())) return undefined;
    if (!this.generation || !sameGeneration(this.generation, since)) {
      this.clear();
      this.generation = since;
    }
    const bytes = typeof value === 'string' ? ownBuffer(value) : value;
    return this.remember(key, bytes, meta) ? bytes : undefined;
  }

  /**
   * Counts `delta` more bytes held for the entry kept under `key` with exactly these `value` bytes (what is made from
   * it and lives as long as it, such as its compressed copies), dropping the least recently used while over the size.
   * Nothing when that entry is no longer kept.
   */
  grow(key: string, value: Buffer, delta: number): void {
    const entry = this.entries.get(key);
    if (entry?.value !== value) return;
    entry.bytes += delta;
    this.bytes += delta;
    this.trim();
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  /**
   * Expired answers are dropped when they expire, not only when next asked for: after a burst of pages, an idle
   * daemon would otherwise hold them (up to `maxBytes`) until the next request.
   */
  private sweepLater(ms: number): void {
    if (this.sweep || !Number.isFinite(ms)) return;
    this.sweep = setTimeout(() => {
      this.sweep = undefined;
      const now = performance.now();
      let next = Infinity;
      let dropped = 0;
      for (const [key, entry] of this.entries) {
        if (entry.expires <= now) {
          this.entries.delete(key);
          this.bytes -= entry.bytes;
          dropped += entry.bytes;
        } else next = Math.min(next, entry.expires);
      }
      if (dropped > 0) this.onExpired(dropped);
      this.sweepLater(next - now);
    }, ms);
    this.sweep.unref();
  }

  /** Whether the value is kept (it is not when larger than an entry may be). */
  private remember(key: string, value: Buffer, meta: Meta | undefined): boolean {
    const bytes = value.length + key.length * 2 + ENTRY_OVERHEAD;
    if (bytes > this.maxEntryBytes) return false;
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.bytes -= old.bytes;
    }
    this.entries.set(key, { value, bytes, meta, expires: performance.now() + this.maxAgeMs });
    this.bytes += bytes;
    this.sweepLater(this.maxAgeMs);
    this.trim();
    return true;
  }

  /** Drops the least recently used entries while more than `maxBytes` is held. */
  private trim(): void {
    for (const [oldest, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= entry.bytes;
    }
  }
}

/** UTF-8 in a buffer of its own: a small Buffer.from shares (and keeps alive) an 8 KB slab of Node's buffer pool. */
export function ownBuffer(text: string): Buffer {
  if (text.length >= Buffer.poolSize) return Buffer.from(text, 'utf8');
  const value = Buffer.allocUnsafeSlow(Buffer.byteLength(text, 'utf8'));
  value.write(text, 'utf8');
  return value;
}

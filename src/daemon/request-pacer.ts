// Requests start in arrival order, a slice of about a millisecond of them at a time, with a turn of the event loop
// between slices. Node's event loop (libuv) accepts at most one new connection per turn, and a turn otherwise runs
// every request that arrived on the connections already open, each to its answer (SQLite reads are synchronous): with
// 64 busy connections a turn lasted 60-200 ms, so a connection still waiting in the kernel's accept queue when the
// load began was accepted seconds late, one turn per connection ahead of it. Held here, the requests of a turn cost
// only their parsing; they start a slice at a time, and between slices the loop polls again and accepts the next
// waiting connection, whose requests then queue behind the others, not behind every turn until its accept.
import { setImmediate } from 'node:timers';

/** Wall time (ms) a slice of request starts may take before the next request waits for the next turn of the loop. */
export const SLICE_MS = 1;
/**
 * Turns in a row that may pass without a request started, each right after a turn that accepted a connection: a
 * backlog of connections is taken in turns of microseconds instead of one slice each, and a flood of new connections
 * still lets a request start at least every this many turns.
 */
const ACCEPT_TURNS = 64;

/** The request's stream: once destroyed (the client has gone), a waiting request is dropped instead of started. */
export interface Incoming {
  readonly destroyed: boolean;
}

interface Waiting {
  start: () => void;
  incoming: Incoming;
}

export class RequestPacer {
  private readonly waiting: Waiting[] = [];
  /** When the current slice began; undefined while no request has started since the loop last found nothing waiting. */
  private sliceStart: number | undefined;
  private pumpScheduled = false;
  /** A connection was accepted since the last pump. */
  private acceptedThisTurn = false;
  private acceptTurnsInARow = 0;
  private readonly sliceMs: number;
  private readonly now: () => number;

  constructor(sliceMs = SLICE_MS, now: () => number = performance.now.bind(performance)) {
    this.sliceMs = sliceMs;
    this.now = now;
  }

  /** Calls `start` now when nothing waits and the slice has time left, else after the requests ahead of it. */
  admit(start: () => void, incoming: Incoming): void {
    if (this.waiting.length === 0 && this.sliceHasTime()) {
      start();
      return;
    }
    this.waiting.push({ start, incoming });
    this.schedulePump();
  }

  /**
   * A request ended: with time left in this slice, the next waiting one starts right after it (in this microtask queue,
   * not inside the hook of the request that ended) rather than a turn later.
   */
  finished(): void {
    if (this.waiting.length > 0 && this.sliceStart !== undefined && this.now() - this.sliceStart < this.sliceMs) queueMicrotask(this.startNext);
  }

  /**
   * A connection was accepted: the loop takes one per turn, and more may be waiting in the kernel's queue, so the next
   * turn starts no request and comes round again at once.
   */
  accepted(): void {
    this.acceptedThisTurn = true;
    if (this.waiting.length > 0) this.schedulePump();
  }

  /** Requests waiting for their turn (tests). */
  get queued(): number {
    return this.waiting.length;
  }

  private sliceHasTime(): boolean {
    const now = this.now();
    if (this.sliceStart === undefined) {
      this.sliceStart = now;
      // Ends the slice at this turn's check phase, whether or not anything had to wait.
      this.schedulePump();
      return true;
    }
    return now - this.sliceStart < this.sliceMs;
  }

  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(this.pump);
  }

  /**
   * Runs in the loop's check phase, after its poll: begins a new slice with the first waiting request, and comes back
   * on the next turn (an immediate set from an immediate runs after the next poll) while any are left.
   */
  private readonly pump = (): void => {
    this.pumpScheduled = false;
    this.sliceStart = undefined;
    if (this.waiting.length === 0) return;
    this.schedulePump();
    if (this.acceptedThisTurn && this.acceptTurnsInARow < ACCEPT_TURNS) {
      this.acceptedThisTurn = false;
      this.acceptTurnsInARow++;
      return;
    }
    this.acceptedThisTurn = false;
    this.acceptTurnsInARow = 0;
    this.sliceStart = this.now();
    this.startNext();
  };

  private readonly startNext = (): void => {
    for (let next = this.waiting.shift(); next; next = this.waiting.shift()) {
      if (next.incoming.destroyed) continue;
      next.start();
      return;
    }
  };
}

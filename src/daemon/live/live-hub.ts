// The live-update hub of one server process: the connected clients (web UI over STOMP, Komga clients over SSE), the
// tail of the events outbox that feeds them, and the periodic work (heart-beats, library health, Komga's task queue
// status). It exists from the first live connection on; with no client connected it reads nothing. Every server process
// (replica or worker) tails the same outbox, so an event reaches clients connected to any of them; it looks again when
// the catalog's generation moves (another process committed: SQLite's data_version, PostgreSQL's NOTIFY).
import { nextTurn } from '../../core/batches.ts';
import { isAdmin, principalFor } from '../../core/auth/principal.ts';
import { eventsAfter, onEventAppended, type OutboxRow } from '../../core/events/outbox.ts';
import { OutboxCursor } from '../../core/events/outbox-cursor.ts';
import { libraryHealth } from '../../core/libraries/library-health.ts';
import { readingAware } from '../../core/store/reading-state.ts';
import { sameGeneration, type Generation } from '../../core/store/snapshot.ts';
import type { DaemonContext } from '../context.ts';
import { revocationMessages, translate, type Outbound, type Protocol, type Recipient } from './live-messages.ts';

export type CloseReason = 'revoked' | 'overflow' | 'shutdown' | 'gone';

/** One live connection, as the hub drives it. */
export interface LiveClient {
  readonly protocol: Protocol;
  /** Set once the client has signed in (a STOMP session before CONNECT has none). */
  readonly userId: number | undefined;
  /** The account Komga clients know themselves as (the OPDS account), for events that name it. */
  readonly komgaUserId?: string;
  /** Queues a message; `flush` sends what is queued. */
  deliver(message: Outbound): void;
  flush(): void;
  /** Heart-beats and time limits; `now` is performance.now(). */
  tick(now: number): void;
  close(reason: CloseReason): void;
}

export interface HubLimits {
  maxConnections: number;
  maxPerUser: number;
  /** Bytes a connection may have waiting to be sent before it is closed (the client reconnects and re-fetches). */
  maxQueuedBytes: number;
  pollMs: number;
  healthEveryMs: number;
  taskStatusEveryMs: number;
}

const DEFAULT_LIMITS: Omit<HubLimits, 'maxConnections' | 'maxPerUser'> = {
  maxQueuedBytes: 1024 * 1024,
  pollMs: 100,
  healthEveryMs: 30_000,
  taskStatusEveryMs: 10_000,
};
const TICK_MS = 500;
/** Events read and sent per step; between steps the sockets get to drain (a burst stays under the queue cap). */
const BATCH_ROWS = 50;

export class LiveHub {
  readonly limits: HubLimits;
  private readonly ctx: DaemonContext;
  private readonly cursor = new OutboxCursor();
  /** Whether the cursor stands after the newest event of when the first client came (retried until it does). */
  private cursorReady = false;
  private lastFailureLogAt = -Infinity;
  /** Every open connection, signed in or not (the total cap counts them all). */
  private readonly open = new Set<LiveClient>();
  private readonly byUser = new Map<number, Set<LiveClient>>();
  private lastGeneration: Generation | undefined;
  private woken = false;
  private polling = false;
  private pollAgain = false;
  private timers: NodeJS.Timeout[] = [];
  private soon: NodeJS.Timeout | undefined;
  private stopListening: (() => void) | undefined;
  private health: string | undefined;
  private lastHealthAt = 0;
  private lastTaskStatusAt = 0;
  private closed = false;

  constructor(ctx: DaemonContext, limits: Partial<HubLimits> = {}) {
    this.ctx = ctx;
    this.limits = { ...DEFAULT_LIMITS, maxConnections: ctx.config.liveMaxConnections, maxPerUser: ctx.config.liveMaxConnectionsPerUser, ...limits };
  }

  get connectionCount(): number {
    return this.open.size;
  }

  /** Takes a new connection, or says why not (the total cap). */
  admit(client: LiveClient): string | undefined {
    if (this.closed) return 'The server is shutting down.';
    if (this.open.size >= this.limits.maxConnections) return `Too many live connections (the server allows ${this.limits.maxConnections}).`;
    this.open.add(client);
    if (this.open.size === 1) void this.start();
    return undefined;
  }

  /** Files a connection under its user once signed in, or says why not (the per-user cap). */
  assignUser(client: LiveClient, userId: number): string | undefined {
    let clients = this.byUser.get(userId);
    if ((clients?.size ?? 0) >= this.limits.maxPerUser) return `Too many live connections for this user (at most ${this.limits.maxPerUser}).`;
    if (!clients) this.byUser.set(userId, (clients = new Set()));
    clients.add(client);
    return undefined;
  }

  release(client: LiveClient): void {
    if (!this.open.delete(client)) return;
    if (client.userId !== undefined) {
      const clients = this.byUser.get(client.userId);
      clients?.delete(client);
      if (clients?.size === 0) this.byUser.delete(client.userId);
    }
    if (this.open.size === 0) this.stop();
  }

  /** Closes every connection and stops (daemon shutdown). */
  close(): void {
    this.closed = true;
    for (const client of [...this.open]) client.close('shutdown');
    this.open.clear();
    this.byUser.clear();
    this.stop();
  }

  private async start(): Promise<void> {
    this.stopListening = onEventAppended(() => this.wake());
    this.timers = [setInterval(() => void this.poll(), this.limits.pollMs).unref(), setInterval(() => this.tick(), TICK_MS).unref()];
    this.health = undefined;
    void this.checkHealth(false);
    this.cursorReady = false;
    await this.poll();
  }

  private stop(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    if (this.soon) clearTimeout(this.soon);
    this.soon = undefined;
    this.stopListening?.();
    this.stopListening = undefined;
  }

  /** This process wrote an event: look as soon as its transaction has committed. */
  private wake(): void {
    this.woken = true;
    this.pollSoon(0);
  }

  private pollSoon(ms: number): void {
    if (this.soon || this.timers.length === 0) return;
    this.soon = setTimeout(() => {
      this.soon = undefined;
      void this.poll();
    }, ms);
  }

  /** Reads the events committed since the last look (nothing when the catalog has not changed) and sends them on. */
  async poll(): Promise<void> {
    if (this.polling) {
      this.pollAgain = true;
      return;
    }
    this.polling = true;
    try {
      do {
        this.pollAgain = false;
        // Reading state too: progress events (Komga read-progress) are appended with it, apart from the catalog.
        const generation = readingAware(this.ctx.store).generation();
        if (!this.woken && this.lastGeneration && sameGeneration(generation, this.lastGeneration)) return;
        this.woken = false;
        this.lastGeneration = generation;
        if (!this.cursorReady) {
          // Events from before the first connection concern nobody connected now.
          await this.ctx.store.read(({ exec }) => this.cursor.start(exec));
          this.cursorReady = true;
          continue;
        }
        // Read as one snapshot of committed rows: on SQLite this waits for a write transaction of this process in
        // flight (what it wrote may yet roll back), on PostgreSQL the pool's connections see only commits anyway.
        const { rows, more } = await this.ctx.store.read(({ exec }) => this.cursor.next(exec, BATCH_ROWS));
        if (rows.length > 0) await this.dispatch(rows);
        if (more) {
          this.pollAgain = true;
          this.woken = true;
          await nextTurn();
        }
      } while (this.pollAgain);
    } catch (error) {
      // Looked at again on the next poll, whether the catalog changed meanwhile or not (the database may be back).
      this.lastGeneration = undefined;
      const now = performance.now();
      if (now - this.lastFailureLogAt >= 10_000) {
        this.lastFailureLogAt = now;
        this.ctx.log.warn({ err: error }, 'live updates: reading the events outbox failed');
      }
    } finally {
      this.polling = false;
    }
  }

  /** The signed-in users with their principals as of now; users whose account is gone are listed apart. */
  private async recipients(): Promise<{ recipients: Map<number, Recipient>; gone: number[] }> {
    const recipients = new Map<number, Recipient>();
    const gone: number[] = [];
    for (const [userId, clients] of this.byUser) {
      const principal = await principalFor(this.ctx.store, userId);
      if (principal) recipients.set(userId, { principal, protocols: new Set([...clients].map((c) => c.protocol)) });
      else gone.push(userId);
    }
    return { recipients, gone };
  }

  private async dispatch(rows: OutboxRow[]): Promise<void> {
    const events = eventsAfter(rows);
    const { recipients, gone } = await this.recipients();
    const { messages, revoked, librariesChanged } = await translate(this.ctx.store, events, recipients, (error) =>
      this.ctx.log.warn({ err: error }, 'live updates: an event could not be prepared'),
    );
    for (const [userId, list] of messages) this.sendToUser(userId, list);
    // A deleted account ends like a revoked session, told or not.
    for (const userId of gone) if (!revoked.has(userId)) revoked.set(userId, 'user_deleted');
    for (const [userId, reason] of revoked) {
      this.sendToUser(userId, revocationMessages(reason));
      for (const client of [...(this.byUser.get(userId) ?? [])]) client.close('revoked');
    }
    if (librariesChanged) await this.checkHealth(true);
  }

  private sendToUser(userId: number, list: readonly Outbound[]): void {
    for (const client of [...(this.byUser.get(userId) ?? [])]) {
      for (const message of list) if (message.protocol === client.protocol) client.deliver(message);
      client.flush();
    }
  }

  private tick(): void {
    const now = performance.now();
    for (const client of [...this.open]) client.tick(now);
    if (now - this.lastHealthAt >= this.limits.healthEveryMs) void this.checkHealth(true);
    if (now - this.lastTaskStatusAt >= this.limits.taskStatusEveryMs) void this.taskQueueStatus();
  }

  /** Grimmory's library-health broadcast: every library's folder accessibility, sent when it changes. */
  private async checkHealth(broadcast: boolean): Promise<void> {
    this.lastHealthAt = performance.now();
    try {
      const body = JSON.stringify({ libraryHealth: await libraryHealth(this.ctx.store.db) });
      const changed = this.health !== undefined && body !== this.health;
      this.health = body;
      if (broadcast && changed) for (const userId of [...this.byUser.keys()]) this.sendToUser(userId, [{ protocol: 'stomp', name: '/topic/library-health', body }]);
    } catch (error) {
      this.ctx.log.warn({ err: error }, 'live updates: library health check failed');
    }
  }

  /** Komga's TaskQueueStatus, to admins, while Komga clients are connected. */
  private async taskQueueStatus(): Promise<void> {
    this.lastTaskStatusAt = performance.now();
    if (![...this.open].some((c) => c.protocol === 'komga')) return;
    try {
      const rows = await this.ctx.store.db.selectFrom('tasks').select(['type', (eb) => eb.fn.countAll<number>().as('n')]).where('status', 'in', ['ACCEPTED', 'IN_PROGRESS']).groupBy('type').execute();
      const countByType = Object.fromEntries(rows.map((r) => [r.type, Number(r.n)]));
      const body = JSON.stringify({ count: Object.values(countByType).reduce((a, b) => a + b, 0), countByType });
      for (const [userId, recipient] of (await this.recipients()).recipients) {
        if (recipient.protocols.has('komga') && isAdmin(recipient.principal)) this.sendToUser(userId, [{ protocol: 'komga', name: 'TaskQueueStatus', body }]);
      }
    } catch (error) {
      this.ctx.log.debug({ err: error }, 'live updates: task queue status skipped');
    }
  }
}

const hubs = new WeakMap<DaemonContext, LiveHub>();

/** The daemon's hub, made with the first live connection. */
export function liveHubOf(ctx: DaemonContext): LiveHub {
  let hub = hubs.get(ctx);
  if (!hub) hubs.set(ctx, (hub = new LiveHub(ctx)));
  return hub;
}

export function existingLiveHub(ctx: DaemonContext): LiveHub | undefined {
  return hubs.get(ctx);
}

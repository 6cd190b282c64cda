// Komga's Server-Sent Events stream (`/komga/sse/v1/events`) for one signed-in Komga client: `event: <Name>` and
// `data: <json>` per message, a `:heartbeat` comment every 15 s, Komga's event names and payloads.
import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { DaemonContext } from '../context.ts';
import { errorBody } from '../http-errors.ts';
import type { CloseReason, LiveClient, LiveHub } from './live-hub.ts';
import type { Outbound } from './live-messages.ts';

const HEARTBEAT_MS = 15_000;

export class KomgaSseClient implements LiveClient {
  readonly protocol = 'komga' as const;
  readonly userId: number;
  readonly komgaUserId: string;
  private readonly res: ServerResponse;
  private readonly hub: LiveHub;
  private lastSentAt = performance.now();
  private ended = false;
  private queued = '';

  constructor(res: ServerResponse, hub: LiveHub, userId: number, komgaUserId: string) {
    this.res = res;
    this.hub = hub;
    this.userId = userId;
    this.komgaUserId = komgaUserId;
    res.on('close', () => this.finished());
    res.on('error', () => this.finished());
  }

  deliver(message: Outbound): void {
    const body = typeof message.body === 'string' ? message.body : message.body(this.komgaUserId);
    this.queued += `event:${message.name}\ndata:${body}\n\n`;
  }

  /** One write for what a step of events queued. */
  flush(): void {
    if (this.queued === '') return;
    const text = this.queued;
    this.queued = '';
    this.write(text);
  }

  tick(now: number): void {
    if (now - this.lastSentAt >= HEARTBEAT_MS) this.write(':heartbeat\n\n');
  }

  close(_reason: CloseReason): void {
    if (this.ended) return;
    this.res.end();
    this.finished();
  }

  private write(text: string): void {
    if (this.ended) return;
    // A reader that stopped reading: its queue stops growing here; the client reconnects and re-fetches.
    if (this.res.writableLength > this.hub.limits.maxQueuedBytes) {
      this.res.destroy();
      this.finished();
      return;
    }
    this.res.write(text);
    this.lastSentAt = performance.now();
  }

  private finished(): void {
    if (this.ended) return;
    this.ended = true;
    this.hub.release(this);
  }
}

/** Opens the stream for a signed-in Komga client, or answers why not (503: server full, 429: too many for this user). */
export async function openKomgaStream(ctx: DaemonContext, reply: FastifyReply, userId: number, komgaUserId: string): Promise<FastifyReply> {
  const { liveHubOf } = await import('./live-hub.ts');
  const hub = liveHubOf(ctx);
  const res = reply.raw;
  const client = new KomgaSseClient(res, hub, userId, komgaUserId);
  const refusal = hub.admit(client);
  if (refusal) return reply.status(503).send(errorBody(503, refusal));
  const perUser = hub.assignUser(client, userId);
  if (perUser) {
    hub.release(client);
    return reply.status(429).send(errorBody(429, perUser));
  }
  reply.hijack();
  res.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    'Content-Type': 'text/event-stream;charset=UTF-8',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    // nginx would otherwise hold events back in its buffer.
    'X-Accel-Buffering': 'no',
  });
  res.write(':connected\n\n');
  return reply;
}

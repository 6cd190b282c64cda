// One web UI connection: STOMP 1.2 over a WebSocket, as Grimmory's broker speaks it. CONNECT must carry
// `Authorization: Bearer <accessToken>`; the client may only subscribe to `/topic/…` and `/user/queue/…` and never
// send. Any refusal is an ERROR frame, after which the socket closes (the UI reconnects after 10 s).
import type { WebSocket } from 'ws';
import { principalFromToken } from '../authenticate.ts';
import type { DaemonContext } from '../context.ts';
import type { CloseReason, LiveClient, LiveHub } from './live-hub.ts';
import type { Outbound } from './live-messages.ts';
import { FrameReader, messageFrame, negotiateVersion, parseHeartBeat, StompProtocolError, writeFrame, type StompFrame } from './stomp-frames.ts';
import { VERSION } from '../../version.ts';

/** Grimmory's limits: a message at most 128 KiB, the CONNECT within 30 s. */
export const MAX_FRAME_BYTES = 128 * 1024;
const CONNECT_WITHIN_MS = 30_000;
/** Heart-beats are sent at the rate the client asks for, but no more often than this. */
const MIN_HEART_BEAT_MS = 1000;
const ALLOWED_PREFIXES = ['/topic/', '/user/queue/'];
/** The web UI subscribes to twelve destinations; a client cannot grow a connection's state past this. */
const MAX_SUBSCRIPTIONS = 64;
/** Frames sent together in one WebSocket message, up to about this size. */
const MAX_BATCH_CHARS = 64 * 1024;

/** WebSocket close codes: policy violation (refusals), try again later (a full send queue, shutdown). */
const CLOSE_POLICY = 1008;
const CLOSE_TRY_AGAIN = 1013;
const CLOSE_GOING_AWAY = 1001;

export class StompSession implements LiveClient {
  readonly protocol = 'stomp' as const;
  userId: number | undefined;
  private readonly ws: WebSocket;
  private readonly hub: LiveHub;
  private readonly ctx: DaemonContext;
  private readonly reader = new FrameReader(MAX_FRAME_BYTES);
  private readonly openedAt = performance.now();
  /** Destination → subscription ids. */
  private readonly subscriptions = new Map<string, string[]>();
  private readonly subscriptionIds = new Map<string, string>();
  private state: 'connecting' | 'connected' | 'closed' = 'connecting';
  private frames: Promise<void> = Promise.resolve();
  private messageId = 0;
  private queued: string[] = [];
  private queuedChars = 0;
  private sendEveryMs = 0;
  private expectEveryMs = 0;
  private lastSentAt = performance.now();
  private lastHeardAt = performance.now();

  constructor(ws: WebSocket, hub: LiveHub, ctx: DaemonContext) {
    this.ws = ws;
    this.hub = hub;
    this.ctx = ctx;
    ws.on('message', (data, isBinary) => this.receive(isBinary ? Buffer.from(data as Buffer).toString('utf8') : data.toString()));
    ws.on('close', () => this.closed());
    ws.on('error', () => this.closed());
  }

  private receive(text: string): void {
    this.lastHeardAt = performance.now();
    let frames: StompFrame[];
    try {
      frames = this.reader.push(text);
    } catch (error) {
      this.refuse(error instanceof StompProtocolError ? error.message : 'Malformed frame');
      return;
    }
    // Frames are handled one after the other: CONNECT is checked before a SUBSCRIBE that follows it at once.
    for (const frame of frames) this.frames = this.frames.then(() => this.handle(frame));
  }

  private async handle(frame: StompFrame): Promise<void> {
    if (this.state === 'closed') return;
    if (this.state === 'connecting' && frame.command !== 'CONNECT' && frame.command !== 'STOMP') {
      this.refuse('Not authenticated');
      return;
    }
    switch (frame.command) {
      case 'CONNECT':
      case 'STOMP':
        if (this.state === 'connected') this.refuse('Already connected');
        else await this.connect(frame);
        return;
      case 'SUBSCRIBE':
        this.subscribe(frame);
        return;
      case 'UNSUBSCRIBE':
        this.unsubscribe(frame);
        return;
      case 'SEND':
        this.refuse('Client SEND is not permitted');
        return;
      case 'DISCONNECT':
        this.receipt(frame);
        this.end(1000, 'disconnected');
        return;
      case 'ACK':
      case 'NACK':
      case 'BEGIN':
      case 'COMMIT':
      case 'ABORT':
        // Subscriptions acknowledge automatically and nothing is sent inside transactions: nothing to do.
        this.receipt(frame);
        return;
      default:
        this.refuse(`Unknown command ${frame.command}`);
    }
  }

  private async connect(frame: StompFrame): Promise<void> {
    const version = negotiateVersion(frame.headers.get('accept-version'));
    if (!version) {
      this.refuse('Supported protocol versions are 1.0, 1.1 and 1.2', { version: '1.2,1.1,1.0' });
      return;
    }
    const header = [...frame.headers].find(([name]) => name.toLowerCase() === 'authorization')?.[1]?.trim();
    if (!header) {
      this.refuse('Missing Authorization header');
      return;
    }
    if (!/^Bearer\s+\S/i.test(header)) {
      this.refuse('Malformed Authorization header');
      return;
    }
    // The same check every route makes: signature, expiry, and the account still being there.
    const principal = await principalFromToken(this.ctx, header.replace(/^Bearer\s+/i, '').trim()).catch(() => undefined);
    if (this.state === 'closed') return;
    if (!principal) {
      this.refuse('Invalid or expired token');
      return;
    }
    const refusal = this.hub.assignUser(this, principal.userId);
    if (refusal) {
      this.refuse(refusal, {}, CLOSE_TRY_AGAIN);
      return;
    }
    this.userId = principal.userId;
    this.state = 'connected';
    const [clientSends, clientWants] = parseHeartBeat(frame.headers.get('heart-beat'));
    this.sendEveryMs = clientWants > 0 ? Math.max(MIN_HEART_BEAT_MS, clientWants) : 0;
    this.expectEveryMs = clientSends > 0 ? Math.max(MIN_HEART_BEAT_MS, clientSends) : 0;
    this.write(writeFrame('CONNECTED', { version, 'heart-beat': `${this.sendEveryMs},${this.expectEveryMs}`, server: `Bindery/${VERSION}`, 'user-name': principal.username }));
  }

  private subscribe(frame: StompFrame): void {
    const id = frame.headers.get('id');
    const destination = frame.headers.get('destination');
    if (!id || !destination || destination.includes('..')) {
      this.refuse('Invalid subscription destination');
      return;
    }
    if (!ALLOWED_PREFIXES.some((prefix) => destination.startsWith(prefix))) {
      this.refuse(`Destination '${destination}' is not allowed`);
      return;
    }
    if (!this.subscriptionIds.has(id) && this.subscriptionIds.size >= MAX_SUBSCRIPTIONS) {
      this.refuse(`At most ${MAX_SUBSCRIPTIONS} subscriptions per connection`);
      return;
    }
    this.unsubscribeId(id);
    this.subscriptionIds.set(id, destination);
    this.subscriptions.set(destination, [...(this.subscriptions.get(destination) ?? []), id]);
    this.receipt(frame);
  }

  private unsubscribe(frame: StompFrame): void {
    const id = frame.headers.get('id');
    if (!id) {
      this.refuse('UNSUBSCRIBE needs an id header');
      return;
    }
    this.unsubscribeId(id);
    this.receipt(frame);
  }

  private unsubscribeId(id: string): void {
    const destination = this.subscriptionIds.get(id);
    if (destination === undefined) return;
    this.subscriptionIds.delete(id);
    const rest = (this.subscriptions.get(destination) ?? []).filter((s) => s !== id);
    if (rest.length > 0) this.subscriptions.set(destination, rest);
    else this.subscriptions.delete(destination);
  }

  private receipt(frame: StompFrame): void {
    const receipt = frame.headers.get('receipt');
    if (receipt !== undefined) this.write(writeFrame('RECEIPT', { 'receipt-id': receipt }));
  }

  /**
   * Queues the message for each subscription to its destination; `flush` sends what is queued as one WebSocket
   * message (STOMP frames end with NUL, and stompjs reads several from one message): one write per connection for a
   * burst instead of one per frame.
   */
  deliver(message: Outbound): void {
    if (this.state !== 'connected' || typeof message.body !== 'string') return;
    const ids = this.subscriptions.get(message.name);
    if (!ids) return;
    const bytes = Buffer.byteLength(message.body);
    for (const id of ids) {
      const frame = messageFrame(message.name, id, ++this.messageId, message.body, bytes);
      this.queued.push(frame);
      this.queuedChars += frame.length;
      if (this.queuedChars >= MAX_BATCH_CHARS) this.flush();
    }
  }

  flush(): void {
    if (this.queued.length === 0) return;
    const text = this.queued.length === 1 ? (this.queued[0] as string) : this.queued.join('');
    this.queued = [];
    this.queuedChars = 0;
    this.write(text);
  }

  tick(now: number): void {
    if (this.state === 'connecting') {
      if (now - this.openedAt > CONNECT_WITHIN_MS) this.refuse('No CONNECT frame within 30 seconds');
      return;
    }
    if (this.state !== 'connected') return;
    // The client's heart-beats may be late by as much again before the connection counts as dead.
    if (this.expectEveryMs > 0 && now - this.lastHeardAt > this.expectEveryMs * 2) {
      this.end(CLOSE_GOING_AWAY, 'no heart-beat from the client');
      return;
    }
    if (this.sendEveryMs > 0 && now - this.lastSentAt >= this.sendEveryMs - 250) this.write('\n');
  }

  close(reason: CloseReason): void {
    if (reason === 'revoked') this.end(CLOSE_POLICY, 'session revoked');
    else if (reason === 'overflow') this.end(CLOSE_TRY_AGAIN, 'too slow: send queue full');
    else if (reason === 'shutdown') this.end(CLOSE_GOING_AWAY, 'server shutting down');
    else this.end(CLOSE_GOING_AWAY, 'gone');
  }

  private write(text: string): void {
    if (this.state === 'closed') return;
    // A client that does not read: its queue stops growing here, and it reconnects and re-fetches.
    if (this.ws.bufferedAmount > this.hub.limits.maxQueuedBytes) {
      this.ctx.log.info({ userId: this.userId }, 'live updates: closing a connection that is not reading');
      this.ws.terminate();
      this.closed();
      return;
    }
    this.ws.send(text);
    this.lastSentAt = performance.now();
  }

  /** An ERROR frame, then the socket closes (Spring's broker does the same when an interceptor refuses a frame). */
  private refuse(message: string, headers: Record<string, string> = {}, code = CLOSE_POLICY): void {
    if (this.state === 'closed') return;
    this.write(writeFrame('ERROR', { message, ...headers, 'content-type': 'text/plain', 'content-length': Buffer.byteLength(message) }, message));
    this.end(code, message.slice(0, 120));
  }

  private end(code: number, reason: string): void {
    if (this.state === 'closed') return;
    this.ws.close(code, reason);
    this.closed();
  }

  private closed(): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.hub.release(this);
  }
}

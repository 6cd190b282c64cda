// Real live-update clients for tests: a STOMP client (@stomp/stompjs over ws, as the web UI uses it) and an SSE reader
// (fetch streaming, as a Komga client reads the stream).
import { Client, type IFrame, type IStompSocket } from '@stomp/stompjs';
import { connect, type Socket } from 'node:net';
import WebSocket from 'ws';

export interface Received {
  destination: string;
  body: unknown;
  at: number;
}

export interface StompTestClient {
  client: Client;
  /** Resolves with the CONNECTED frame, or rejects with the ERROR frame's message. */
  connected: Promise<IFrame>;
  /** Resolves with the ERROR frame's message. */
  error: Promise<string>;
  /** Resolves with the close code when the socket closes. */
  closed: Promise<number>;
  messages: Received[];
  subscribe(...destinations: string[]): void;
  /** Waits for a message on the destination that passes `test`. */
  next(destination: string, test?: (body: unknown) => boolean, timeoutMs?: number): Promise<Received>;
  stop(): Promise<void>;
}

export const GRIMMORY_UI_DESTINATIONS = [
  'book-add', 'book-update', 'books-cover-update', 'books-remove', 'book-metadata-update', 'book-metadata-batch-update',
  'book-metadata-batch-progress', 'log', 'bookdrop-file', 'task-progress', 'session-revoked',
].map((q) => `/user/queue/${q}`).concat('/topic/library-health');

async function waitUntil<T>(find: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export function stompClient(wsUrl: string, token: string | undefined, options: { heartBeat?: number; headers?: Record<string, string> } = {}): StompTestClient {
  const messages: Received[] = [];
  let resolveConnected!: (frame: IFrame) => void;
  let rejectConnected!: (error: Error) => void;
  let resolveError!: (message: string) => void;
  let resolveClosed!: (code: number) => void;
  const connected = new Promise<IFrame>((res, rej) => ((resolveConnected = res), (rejectConnected = rej)));
  connected.catch(() => undefined);
  const error = new Promise<string>((res) => (resolveError = res));
  const closed = new Promise<number>((res) => (resolveClosed = res));
  const client = new Client({
    webSocketFactory: () => new WebSocket(wsUrl) as unknown as IStompSocket,
    connectHeaders: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...options.headers },
    heartbeatIncoming: options.heartBeat ?? 0,
    heartbeatOutgoing: options.heartBeat ?? 0,
    reconnectDelay: 0,
    onConnect: (frame) => resolveConnected(frame),
    onStompError: (frame) => {
      resolveError(frame.headers.message ?? frame.body);
      rejectConnected(new Error(frame.headers.message ?? frame.body));
    },
    onWebSocketClose: (event: { code: number }) => {
      resolveClosed(event.code);
      rejectConnected(new Error(`closed ${event.code}`));
    },
  });
  client.activate();
  return {
    client,
    connected,
    error,
    closed,
    messages,
    subscribe: (...destinations) => {
      for (const destination of destinations) client.subscribe(destination, (m) => messages.push({ destination, body: JSON.parse(m.body) as unknown, at: Date.now() }));
    },
    next: (destination, test = () => true, timeoutMs = 5000) => waitUntil(() => messages.find((m) => m.destination === destination && test(m.body)), timeoutMs, `a message on ${destination}`),
    stop: async () => {
      await client.deactivate();
    },
  };
}

export interface SseEvent {
  name: string;
  data: unknown;
  at: number;
}

export interface SseReader {
  status: number;
  events: SseEvent[];
  comments: string[];
  next(name: string, test?: (data: unknown) => boolean, timeoutMs?: number): Promise<SseEvent>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  stop(): void;
}

export async function sseReader(url: string, headers: Record<string, string>): Promise<SseReader> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { Accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const ended = (async () => {
    if (res.status !== 200 || !res.body) return;
    const decoder = new TextDecoder();
    let pending = '';
    try {
      for await (const chunk of res.body) {
        pending += decoder.decode(chunk as Uint8Array, { stream: true });
        let end: number;
        while ((end = pending.indexOf('\n\n')) !== -1) {
          const block = pending.slice(0, end);
          pending = pending.slice(end + 2);
          let name = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) comments.push(line.slice(1));
            else if (line.startsWith('event:')) name = line.slice(6).trim();
            else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
          }
          if (data.length > 0) events.push({ name, data: JSON.parse(data.join('\n')) as unknown, at: Date.now() });
        }
      }
    } catch {
      // aborted by stop()
    }
  })();
  return {
    status: res.status,
    events,
    comments,
    ended,
    next: (name, test = () => true, timeoutMs = 5000) => waitUntil(() => events.find((e) => e.name === name && test(e.data)), timeoutMs, `SSE event ${name}`),
    stop: () => abort.abort(),
  };
}

/** A client-to-server WebSocket text frame (masked, as a client must send it). */
function maskedTextFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const mask = Buffer.from([0x12, 0x34, 0x56, 0x78]);
  const masked = Buffer.from(payload.map((b, i) => b ^ (mask[i % 4] as number)));
  const length = payload.length < 126 ? Buffer.from([0x80 | payload.length]) : Buffer.from([0x80 | 126, payload.length >> 8, payload.length & 0xff]);
  return Buffer.concat([Buffer.from([0x81]), length, mask, masked]);
}

/**
 * A WebSocket STOMP client written by hand on a bare TCP socket: upgraded, CONNECTed and SUBSCRIBEd, after which the
 * caller decides whether it reads (a reader that stalls is one that pauses the socket).
 */
export async function rawStompSocket(port: number, path: string, token: string, destinations: string[]): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`);
  const answer = await new Promise<string>((resolve) => socket.once('data', (b: Buffer) => resolve(b.toString('latin1'))));
  if (!answer.startsWith('HTTP/1.1 101')) throw new Error(`upgrade refused: ${answer.split('\r\n')[0]}`);
  socket.write(maskedTextFrame(`CONNECT\naccept-version:1.2\nAuthorization:Bearer ${token}\n\n\0`));
  destinations.forEach((destination, i) => socket.write(maskedTextFrame(`SUBSCRIBE\nid:${i}\ndestination:${destination}\n\n\0`)));
  return socket;
}

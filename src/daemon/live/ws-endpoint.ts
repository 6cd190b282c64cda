// The WebSocket endpoint `<base path>/ws`, on the HTTP server's upgrade event (outside the route table). Only this
// small file loads with the daemon: the `ws` package, the STOMP code and the hub load with the first upgrade.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { DaemonContext } from '../context.ts';

/** Whether a browser page from `origin` may connect, following `allowedOrigins` as the CORS set-up does ("" = same origin only). */
export function originAllowed(allowedOrigins: string, origin: string | undefined, host: string | undefined): boolean {
  if (origin === undefined || allowedOrigins.trim() === '*') return true;
  let originHost: string;
  try {
    originHost = new URL(origin).host;
  } catch {
    return false;
  }
  if (host !== undefined && originHost === host) return true;
  return allowedOrigins
    .split(',')
    .map((o) => o.trim().replace(/\/$/, ''))
    .filter(Boolean)
    .includes(origin.replace(/\/$/, ''));
}

function refuse(socket: Duplex, status: number, reason: string, message: string): void {
  const body = JSON.stringify({ status, error: reason, message, timestamp: new Date().toISOString() });
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

type Accept = (request: IncomingMessage, socket: Duplex, head: Buffer) => void;

/** Loads `ws` and the STOMP session code, and returns what takes an upgrade over. */
async function loadAcceptor(ctx: DaemonContext): Promise<Accept> {
  const [{ WebSocketServer }, { StompSession, MAX_FRAME_BYTES }, { liveHubOf }] = await Promise.all([import('ws'), import('./stomp-session.ts'), import('./live-hub.ts')]);
  // No compression: a deflate context per connection costs more memory than the small JSON frames save.
  const server = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES, perMessageDeflate: false, clientTracking: false });
  const hub = liveHubOf(ctx);
  return (request, socket, head) => {
    if (hub.connectionCount >= hub.limits.maxConnections) {
      refuse(socket, 503, 'Service Unavailable', `Too many live connections (the server allows ${hub.limits.maxConnections}).`);
      return;
    }
    server.handleUpgrade(request, socket, head, (ws) => {
      const session = new StompSession(ws, hub, ctx);
      const refusal = hub.admit(session);
      if (refusal) ws.close(1013, refusal.slice(0, 120));
    });
  };
}

export function acceptLiveUpgrades(app: FastifyInstance, ctx: DaemonContext): void {
  const path = `${ctx.config.basePath}/ws`;
  let acceptor: Promise<Accept> | undefined;
  app.server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const target = (request.url ?? '').split('?')[0]?.replace(/\/+$/, '');
    if (target !== path) {
      refuse(socket, 404, 'Not Found', 'Resource not found.');
      return;
    }
    if (!originAllowed(ctx.config.allowedOrigins, request.headers.origin, request.headers.host)) {
      refuse(socket, 403, 'Forbidden', 'Origin not allowed.');
      return;
    }
    acceptor ??= loadAcceptor(ctx).catch((error: unknown) => {
      acceptor = undefined;
      throw error;
    });
    acceptor.then(
      (accept) => accept(request, socket, head),
      (error: unknown) => {
        ctx.log.error({ err: error }, 'live updates: the WebSocket endpoint could not start');
        refuse(socket, 500, 'Internal Server Error', 'An unexpected error occurred.');
      },
    );
  });
}

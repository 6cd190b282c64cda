// A stand-in for a remote website or API: a real HTTP server on 127.0.0.1 answering from a route table, recording what
// it was asked. Providers are pointed at it through the provider runtime's base URLs.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
  /** ms since the site started, when the request arrived. */
  at: number;
}

export interface FakeAnswer {
  status?: number;
  /** Undefined values are left out. */
  headers?: Record<string, string | undefined>;
  html?: string;
  json?: unknown;
  body?: string | Buffer;
  contentType?: string;
  /** Answer with a redirect to this path or URL. */
  redirect?: string;
  /** Wait this long before answering (timeouts). */
  delayMs?: number;
}

type Handler = (request: FakeRequest) => FakeAnswer | Promise<FakeAnswer>;

export interface FakeSite {
  url: string;
  requests: FakeRequest[];
  /** Routes are matched in the order added; a string matches the path exactly. */
  on(method: string, path: string | RegExp, handler: Handler | FakeAnswer): void;
  /** Forgets routes and recorded requests. */
  reset(): void;
  close(): Promise<void>;
}

export async function startFakeSite(): Promise<FakeSite> {
  const started = Date.now();
  const routes: { method: string; path: string | RegExp; handler: Handler }[] = [];
  const requests: FakeRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const url = new URL(req.url ?? '/', 'http://127.0.0.1');
        const request: FakeRequest = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() - started };
        requests.push(request);
        const route = routes.find((r) => r.method === request.method && (typeof r.path === 'string' ? r.path === request.path : r.path.test(request.path)));
        if (!route) {
          res.writeHead(404, { 'content-type': 'text/html' }).end('<html><body>Not found</body></html>');
          return;
        }
        const answer = await route.handler(request);
        if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
        if (res.destroyed) return;
        if (answer.redirect) {
          res.writeHead(answer.status ?? 302, { location: answer.redirect }).end();
          return;
        }
        let body: string | Buffer = answer.body ?? '';
        let type = answer.contentType;
        if (answer.json !== undefined) {
          body = JSON.stringify(answer.json);
          type ??= 'application/json; charset=utf-8';
        } else if (answer.html !== undefined) {
          body = answer.html;
          type ??= 'text/html; charset=utf-8';
        }
        const extra = Object.fromEntries(Object.entries(answer.headers ?? {}).filter((e): e is [string, string] => e[1] !== undefined));
        res.writeHead(answer.status ?? 200, { ...(type ? { 'content-type': type } : {}), ...extra }).end(body);
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    on(method, path, handler) {
      routes.push({ method, path, handler: typeof handler === 'function' ? handler : () => handler });
    },
    reset() {
      routes.length = 0;
      requests.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// CORS for every answer, from BINDERY_ALLOWED_ORIGINS: "*" (any origin, echoed back, with credentials), a comma-separated
// list (only those echoed), a list naming "*" (then "*" itself), or "" (none). Preflights (OPTIONS with Origin and
// Access-Control-Request-Method) are answered 204 here; other OPTIONS requests 400. The answers are those of
// @fastify/cors with the daemon's options, which this replaced: that plugin copied its options object, built the
// route's options twice and made a closure on every request (~6 % of what a kept page allocated; docs/benchmarks.md,
// "Session 11: fairness of kept pages"). Everything that does not depend on the request is worked out once here.
import type { FastifyInstance } from 'fastify';
import { addToVary } from './vary.ts';

const ALLOWED_METHODS = 'GET,HEAD,POST';
const ALLOWED_HEADERS = ['Authorization', 'Cache-Control', 'Content-Type', 'Range', 'If-None-Match', 'If-Modified-Since'].join(', ');
const EXPOSED_HEADERS = ['Content-Disposition', 'Accept-Ranges', 'Content-Range', 'Content-Length', 'ETag', 'Date', 'Last-Modified'].join(', ');

/** Which origins are echoed: every one, those listed, or "*" sent whatever the origin. */
type OriginRule = { kind: 'any' } | { kind: 'listed'; origins: ReadonlySet<string> } | { kind: 'star' };

export function originRule(allowedOrigins: string): OriginRule {
  if (allowedOrigins === '*') return { kind: 'any' };
  const origins = allowedOrigins.split(',').map((origin) => origin.trim());
  return origins.includes('*') ? { kind: 'star' } : { kind: 'listed', origins: new Set(origins) };
}

/** The Access-Control-Allow-Origin to send to a request from `origin`, if any. */
function allowOrigin(rule: OriginRule, origin: string | undefined): string | undefined {
  switch (rule.kind) {
    case 'star':
      return '*';
    case 'any':
      return origin;
    case 'listed':
      return origin !== undefined && rule.origins.has(origin) ? origin : undefined;
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    /** This OPTIONS request is a CORS preflight (answered by the onRequest hook). */
    corsPreflight: boolean;
  }
}

/** The CORS hook (first of the onRequest hooks: a preflight is answered before any other work) and the OPTIONS route. */
export function registerCors(app: FastifyInstance, allowedOrigins: string): void {
  const rule = originRule(allowedOrigins);
  const echoes = rule.kind !== 'star';
  app.decorateRequest('corsPreflight', false);
  app.addHook('onRequest', (request, reply, done) => {
    // The answer depends on the Origin sent unless it is always "*".
    if (echoes) reply.header('vary', addToVary(reply.getHeader('vary'), 'Origin'));
    const allowed = allowOrigin(rule, request.headers.origin);
    if (allowed !== undefined) reply.header('access-control-allow-origin', allowed);
    reply.header('access-control-allow-credentials', 'true');
    reply.header('access-control-expose-headers', EXPOSED_HEADERS);
    if (request.raw.method !== 'OPTIONS') return done();
    if (!request.headers.origin || !request.headers['access-control-request-method']) {
      reply.status(400).type('text/plain').send('Invalid Preflight Request');
      return;
    }
    request.corsPreflight = true;
    reply.header('access-control-allow-methods', ALLOWED_METHODS);
    reply.header('access-control-allow-headers', ALLOWED_HEADERS);
    reply.code(204).header('content-length', '0').send();
  });
  // Every path answers OPTIONS (the hook answers preflights before the route runs).
  app.options('*', { schema: { hide: true } }, (request, reply) => {
    if (!request.corsPreflight) return reply.callNotFound();
    return reply.send();
  });
}

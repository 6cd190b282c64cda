// Serving a web UI build (such as Grimmory's) from the same origin, with deep links falling back to index.html.
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../core/config.ts';
import { errorBody } from './http-errors.ts';

const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'credentialless',
};

export async function registerWebRoot(app: FastifyInstance, config: Config): Promise<void> {
  if (!config.webRoot) return;
  await app.register(fastifyStatic, {
    root: config.webRoot,
    prefix: `${config.basePath}/`,
    wildcard: false,
    index: ['index.html'],
    setHeaders: (res, path) => {
      for (const [k, v] of Object.entries(ISOLATION_HEADERS)) res.header(k, v);
      if (path.endsWith('.wasm')) res.header('Content-Type', 'application/wasm');
      if (/\.[0-9a-f]{8,}\.(js|css|woff2?)$/i.test(path)) res.header('Cache-Control', 'public, max-age=31536000, immutable');
    },
  });
}

/** Any GET that is not an API path and not a file: the single-page app's index.html. */
registerWebRoot.fallback = (config: Config, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
  if (!config.webRoot || (request.method !== 'GET' && request.method !== 'HEAD')) {
    return reply.status(404).send(errorBody(404, 'Resource not found.'));
  }
  for (const [k, v] of Object.entries(ISOLATION_HEADERS)) reply.header(k, v);
  reply.header('Cache-Control', 'no-cache');
  return reply.sendFile('index.html', config.webRoot);
};

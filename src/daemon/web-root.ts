// Serving a web UI build (such as Grimmory's) from the same origin, with deep links falling back to index.html.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../core/config.ts';
import { errorBody } from './http-errors.ts';

/** Grimmory sends these on every response: the PDF reader's threaded pdfium WASM needs a cross-origin-isolated page. */
export const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'credentialless',
} as const;

/** Build output named by content hash (`main.abc12345.js`, `chunk-4KQ2ZC7D.js`) never changes under its name. */
const HASHED_ASSET = /[.-](?=[0-9A-Za-z]*[0-9])[0-9A-Za-z]{8,}\.(?:js|mjs|css|woff2?|wasm)$/;

/**
 * Files under the web root are served at `<basePath>/`. A GET for a file that does not exist falls through to the
 * not-found handler, which answers API paths with a JSON 404 and everything else with index.html. @fastify/static
 * is only loaded when a web root is configured; its wildcard route means no directory walk at start and a UI
 * upgraded in place is served without a restart.
 */
export async function registerWebRoot(app: FastifyInstance, config: Config): Promise<void> {
  if (!config.webRoot) return;
  const { default: fastifyStatic } = await import('@fastify/static');
  await app.register(fastifyStatic, {
    root: config.webRoot,
    prefix: `${config.basePath}/`,
    wildcard: true,
    index: ['index.html'],
    setHeaders: (res, path) => {
      for (const [k, v] of Object.entries(ISOLATION_HEADERS)) res.header(k, v);
      if (path.endsWith('.wasm')) res.header('Content-Type', 'application/wasm');
      if (HASHED_ASSET.test(path)) res.header('Cache-Control', 'public, max-age=31536000, immutable');
      // The app shell names the current bundles: browsers must revalidate it.
      else if (path.endsWith('.html')) res.header('Cache-Control', 'no-cache');
    },
  });
}

/** Any GET that is not an API path and not a file: the single-page app's index.html. */
registerWebRoot.fallback = (config: Config, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
  if (!config.webRoot || (request.method !== 'GET' && request.method !== 'HEAD')) {
    return reply.status(404).send(errorBody(404, 'Resource not found.'));
  }
  reply.headers(ISOLATION_HEADERS);
  return reply.sendFile('index.html', config.webRoot);
};

// Serving a web UI build (such as Grimmory's) from the same origin, with deep links falling back to index.html.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';
import { dataPaths, type Config } from '../core/config.ts';
import { isNotModified } from '../core/media/conditional-requests.ts';
import { negotiateEncoding, SUPPORTED_ENCODINGS, type Encoding } from './compression.ts';
import { addToVary } from './vary.ts';
import { errorBody } from './http-errors.ts';
import { PrecompressedAssets } from './precompressed-assets.ts';

/** Grimmory sends these on every response: the PDF reader's threaded pdfium WASM needs a cross-origin-isolated page. */
// Names in lower case, as fastify keeps them (it lower-cases each name it is given, a new string every time).
export const ISOLATION_HEADERS = {
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-embedder-policy': 'credentialless',
} as const;

/** Build output named by content hash (`main.abc12345.js`, `chunk-4KQ2ZC7D.js`) never changes under its name. */
const HASHED_ASSET = /[.-](?=[0-9A-Za-z]*[0-9])[0-9A-Za-z]{8,}\.(?:js|mjs|css|woff2?|wasm)$/;

/** Cache-Control of a web-root file: hashed bundles are immutable, the app shell is revalidated. */
function cacheControlOf(path: string): string | undefined {
  if (HASHED_ASSET.test(path)) return 'public, max-age=31536000, immutable';
  // The app shell names the current bundles: browsers must revalidate it.
  if (path.endsWith('.html')) return 'no-cache';
  return undefined;
}

/** Text assets worth sending compressed, by extension, with their media type. */
const COMPRESSIBLE_ASSETS: Record<string, string> = {
  '.js': 'application/javascript; charset=utf-8',
  '.mjs': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.txt': 'text/plain; charset=utf-8',
  '.xml': 'application/xml; charset=utf-8',
};

/** Precompressed copies favour the best ratio: brotli at its top quality beats zstd's for text. */
const ASSET_ENCODINGS: readonly Encoding[] = SUPPORTED_ENCODINGS.includes('zstd') ? ['br', 'zstd', 'gzip'] : ['br', 'gzip'];

/**
 * Files under the web root are served at `<basePath>/`. A GET for a file that does not exist falls through to the
 * not-found handler, which answers API paths with a JSON 404 and everything else with index.html. @fastify/static
 * is only loaded when a web root is configured; its wildcard route means no directory walk at start and a UI
 * upgraded in place is served without a restart. With compression on, text assets are sent from their precompressed
 * copies (precompressed-assets.ts) to clients that accept br, zstd or gzip; a Range request gets the file itself.
 */
export async function registerWebRoot(app: FastifyInstance, config: Config): Promise<void> {
  const webRoot = config.webRoot;
  if (!webRoot) return;
  const { default: fastifyStatic } = await import('@fastify/static');
  await app.register(fastifyStatic, {
    root: webRoot,
    prefix: `${config.basePath}/`,
    wildcard: true,
    index: ['index.html'],
    setHeaders: (res, path) => {
      for (const [k, v] of Object.entries(ISOLATION_HEADERS)) res.header(k, v);
      if (path.endsWith('.wasm')) res.header('Content-Type', 'application/wasm');
      const cacheControl = cacheControlOf(path);
      if (cacheControl) res.header('Cache-Control', cacheControl);
    },
  });
  if (!config.compressResponses) return;

  const root = resolve(webRoot);
  const staticRoute = `${config.basePath}/*`;
  const assets = new PrecompressedAssets(join(dataPaths(config).cache, 'web'), (error, file) => app.log.warn({ err: error, file }, 'could not precompress a web asset'));
  app.addHook('onRequest', async (request, reply) => {
    if (request.method !== 'GET' || request.routeOptions.url !== staticRoute || request.headers.range !== undefined) return;
    const encoding = negotiateEncoding(request.headers['accept-encoding'], ASSET_ENCODINGS);
    if (!encoding) return;
    let relative: string;
    try {
      relative = decodeURIComponent((request.url.split('?')[0] ?? '').slice(config.basePath.length + 1));
    } catch {
      return;
    }
    const file = resolve(root, relative === '' || relative.endsWith('/') ? `${relative}index.html` : relative);
    if (!file.startsWith(`${root}${sep}`)) return;
    const type = COMPRESSIBLE_ASSETS[extname(file).toLowerCase()];
    if (!type) return;
    const info = await stat(file).catch(() => undefined);
    if (!info?.isFile()) return;
    const copy = await assets.copyOf(file, info, encoding);
    reply.header('Vary', addToVary(reply.getHeader('vary'), 'Accept-Encoding'));
    if (!copy) return;
    const etag = `"${info.size.toString(36)}-${Math.trunc(info.mtimeMs).toString(36)}-${encoding}"`;
    const cacheControl = cacheControlOf(file);
    reply.headers(ISOLATION_HEADERS).header('ETag', etag).header('Last-Modified', info.mtime.toUTCString());
    if (cacheControl) reply.header('Cache-Control', cacheControl);
    if (isNotModified(request.headers['if-none-match'], request.headers['if-modified-since'], etag, info.mtime)) return reply.status(304).send();
    return reply.type(type).header('Content-Encoding', encoding).header('Content-Length', copy.size).send(createReadStream(copy.path));
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

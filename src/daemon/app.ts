// Builds the HTTP application. Tests call this directly; only `bindery serve` listens.
import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { randomUUID } from 'node:crypto';
import { dataPaths, type Config } from '../core/config.ts';
import { signingSecret } from '../core/auth/tokens.ts';
import type { Store } from '../core/store/store.ts';
import { VERSION } from '../version.ts';
import { authenticate } from './authenticate.ts';
import type { DaemonContext } from './context.ts';
import { ApiError, errorBody } from './http-errors.ts';
import type { RouteRequest, RouteSpec } from './route-spec.ts';
import { allRoutes } from './routes/index.ts';
import { registerWebRoot } from './web-root.ts';

export interface BuildAppOptions {
  config: Config;
  store: Store;
  /** pino options or false; defaults to silent (tests). */
  logger?: FastifyServerOptions['logger'];
  /** Extra routes (tests); production uses the route table. */
  routes?: RouteSpec[];
}

export interface BuiltApp {
  app: FastifyInstance;
  ctx: DaemonContext;
  routes: RouteSpec[];
}

/** `{bookId}` → `:bookId`, `{*rest}` → `*`. */
export function fastifyPath(url: string): string {
  return url.replace(/\{\*[^}]+\}/g, '*').replace(/\{([^}]+)\}/g, ':$1');
}

const REDACTED_HEADERS = ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-auth-key"]', 'req.query.token'];

export async function buildApp(options: BuildAppOptions): Promise<BuiltApp> {
  const { config, store } = options;
  const prefix = config.basePath;
  const app = Fastify({
    logger: options.logger ?? false,
    trustProxy: config.trustProxy,
    genReqId: (req) => (req.headers['x-request-id'] as string | undefined)?.slice(0, 64) ?? randomUUID(),
    bodyLimit: 16 * 1024 * 1024,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 2048 },
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: false, useDefaults: true, allErrors: true } },
  });
  if (options.logger) app.log.debug({ redact: REDACTED_HEADERS }, 'logger ready');

  const ctx: DaemonContext = {
    config,
    store,
    paths: dataPaths(config),
    jwtSecret: await signingSecret(store.db),
    log: app.log,
    background: new Set(),
  };

  await app.register(cors, {
    origin: config.allowedOrigins === '*' ? true : config.allowedOrigins.split(',').map((o) => o.trim()),
    credentials: true,
    allowedHeaders: ['Authorization', 'Cache-Control', 'Content-Type', 'Range', 'If-None-Match', 'If-Modified-Since'],
    exposedHeaders: ['Content-Disposition', 'Accept-Ranges', 'Content-Range', 'Content-Length', 'ETag', 'Date', 'Last-Modified'],
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Bindery API', version: VERSION, description: 'Grimmory-compatible book library API' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
    },
  });
  await app.register(swaggerUi, { routePrefix: `${prefix}/api/docs`, uiConfig: { url: `${prefix}/api/openapi.json` } });

  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof ApiError) return reply.status(error.status).send(errorBody(error.status, error.message, error.details));
    if (error.validation) {
      const details = error.validation.map((v) => `${(v.instancePath || v.params?.missingProperty || error.validationContext || '').toString().replace(/^\//, '').replace(/\//g, '.') || error.validationContext}: ${v.message ?? 'invalid'}`);
      return reply.status(400).send(errorBody(400, 'Validation error', details));
    }
    const status = error.statusCode ?? 500;
    if (error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || (status === 400 && error instanceof SyntaxError)) {
      return reply.status(400).send(errorBody(400, 'Request body is missing or malformed.'));
    }
    if (status >= 400 && status < 500) return reply.status(status).send(errorBody(status, error.message));
    request.log.error({ err: error }, 'request failed');
    return reply.status(500).send(errorBody(500, 'An unexpected error occurred.'));
  });

  const routes = options.routes ?? allRoutes();
  await app.register(
    async (scope) => {
      for (const spec of routes) {
        scope.route({
          method: spec.method,
          url: fastifyPath(spec.url),
          ...(spec.schema ? { schema: spec.schema } : {}),
          ...(spec.bodyLimit ? { bodyLimit: spec.bodyLimit } : {}),
          preHandler: (request, reply) => authenticate(spec, request as RouteRequest, reply, ctx),
          handler: (request, reply) => spec.handler(request as RouteRequest, reply, ctx),
        });
      }
      scope.get('/api/openapi.json', { schema: { hide: true } }, () => app.swagger());
    },
    { prefix },
  );

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.slice(prefix.length);
    if (path.startsWith('/api') || path.startsWith('/komga') || path.startsWith('/ws')) {
      return reply.status(404).send(errorBody(404, 'Resource not found.'));
    }
    return registerWebRoot.fallback(config, request, reply);
  });
  if (config.webRoot) await registerWebRoot(app, config);

  app.addHook('onClose', async () => {
    await Promise.allSettled([...ctx.background]);
  });
  return { app, ctx, routes };
}

export type { Config };

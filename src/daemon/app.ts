// Builds the HTTP application. Tests call this directly; only `bindery serve` listens.
// Start-up cost matters (a Raspberry Pi restarts it under systemd): what most requests never need — the API docs,
// schema compilers, the static file server — is set up on first use rather than at start.
import type AjvCompilerModule from '@fastify/ajv-compiler';
import type { SerializerSelector as SerializerSelectorFn } from '@fastify/fast-json-stringify-compiler';
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify';
import { allowedPrivateHosts, dataPaths, type Config } from '../core/config.ts';
import { createHttpClient } from '../core/net/http-client.ts';
import { PasswordBusyError } from '../core/auth/password-busy.ts';
import { signingSecret } from '../core/auth/tokens.ts';
import { DATABASE_RETRY_AFTER_S, isDatabaseUnavailable } from '../core/store/database-unavailable.ts';
import { describeStorageFailure, storageFailureOf } from '../core/store/storage-failure.ts';
import type { Store } from '../core/store/store.ts';
import { VERSION } from '../version.ts';
import { authenticate, authenticateAtOnce, NOT_KNOWN_AT_ONCE } from './authenticate.ts';
import type { DaemonContext } from './context.ts';
import { ApiError, errorBody } from './http-errors.ts';
import { compactWhenIdle, growHeapForServing } from './idle-memory.ts';
import { optimizeFromNowOn, optimizeOnFirstApiRequest } from './optimizing-compilers.ts';
import { answerFromPageCache, isCachedPageRoute, keepPage, leaveBuild, shelfKindOf } from './page-cache.ts';
import type { RouteHead, SchemaPart } from './route-manifest.ts';
import type { RouteRequest, RouteSpec } from './route-spec.ts';
import { RouteTable } from './route-table.ts';
import { ROUTE_GROUPS } from './routes/index.ts';
import { ROUTE_MANIFEST } from './routes/manifest.ts';
import { ISOLATION_HEADERS, registerWebRoot } from './web-root.ts';
import { acceptLiveUpgrades } from './live/ws-endpoint.ts';
import { registerCompression } from './compression.ts';
import { registerCors } from './cors.ts';
import { RequestPacer } from './request-pacer.ts';
import { requestIds, requestLogger } from './request-logger.ts';
import type { CatalogChangeWatch } from './catalog-change-watch.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes form bodies (see the content-type parsers below). */
    formBody?: boolean;
    /** The route takes the raw request stream as its body. */
    rawBody?: boolean;
  }
}

/** How often a listening daemon looks whether the catalog changed since the Komga series figures were last worked out. */
const SERIES_FIGURES_LOOK_MS = 30_000;

export interface BuildAppOptions {
  config: Config;
  store: Store;
  /** pino options or false; defaults to silent (tests). */
  logger?: FastifyServerOptions['logger'];
  /** The routes to serve (tests); production serves the route table, each group loaded with its first request. */
  routes?: RouteSpec[];
  /**
   * Load each route group and compile each route's validators and serializers on its first request instead of at
   * start (the default). `false` loads every group and compiles every schema in `ready()`, which is how a test proves
   * every schema in the table compiles.
   */
  lazySchemas?: boolean;
  /** How often the daemon looks for a catalog change to work out the Komga series figures after (tests). */
  seriesFiguresLookMs?: number;
}

export interface BuiltApp {
  app: FastifyInstance;
  ctx: DaemonContext;
  routes: RouteTable;
}

/** `{bookId}` → `:bookId`, `{*rest}` → `*`. */
export function fastifyPath(url: string): string {
  return url.replace(/\{\*[^}]+\}/g, '*').replace(/\{([^}]+)\}/g, ':$1');
}

const REDACTED_HEADERS = ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-auth-key"]', 'req.query.token'];
const AJV_OPTIONS = { customOptions: { coerceTypes: 'array' as const, removeAdditional: false, useDefaults: true, allErrors: true } };

type ValidatorFactory = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildValidator']>;
type SerializerFactory = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']>;

/**
 * Fastify's own compilers (Ajv and fast-json-stringify), deferred: the Ajv instance is created, and a route's schema
 * compiled, when a request first needs it. With hundreds of routes this keeps start-up time and memory flat.
 * Ajv's `schemaEnv` (fastify passes the parent object when it is present, so Ajv can coerce the root) and `errors`
 * are read through to the compiled function.
 */
interface SchemaCompilers {
  ajv: typeof AjvCompilerModule;
  serializerSelector: typeof SerializerSelectorFn;
}
let schemaCompilers: SchemaCompilers | undefined;
let loadingSchemaCompilers: Promise<SchemaCompilers> | undefined;

/**
 * Ajv and fast-json-stringify (~0.5 MB of code) load with the first request that has a schema, which awaits this in
 * its onRequest hook; compiling happens later in the same request, synchronously.
 */
async function loadSchemaCompilers(): Promise<void> {
  loadingSchemaCompilers ??= Promise.all([import('@fastify/ajv-compiler'), import('@fastify/fast-json-stringify-compiler')]).then(
    ([ajv, fjs]) => (schemaCompilers = { ajv: ajv.default, serializerSelector: fjs.SerializerSelector }),
  );
  await loadingSchemaCompilers;
}

function loadedSchemaCompilers(): SchemaCompilers {
  if (!schemaCompilers) throw new Error('a schema was compiled before the schema compilers were loaded');
  return schemaCompilers;
}

function lazySchemaController(resolve: (schema: unknown) => unknown = (schema) => schema): NonNullable<FastifyServerOptions['schemaController']> {
  let validatorSelector: ReturnType<typeof AjvCompilerModule> | undefined;
  let serializerSelector: ReturnType<typeof SerializerSelectorFn> | undefined;
  const validators: ReturnType<typeof AjvCompilerModule> = (...args) => (validatorSelector ??= loadedSchemaCompilers().ajv())(...args);
  const serializers: ReturnType<typeof SerializerSelectorFn> = (...args) => (serializerSelector ??= loadedSchemaCompilers().serializerSelector())(...args);
  type Validate = ((data: unknown, dataCxt?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown };
  type RouteSchema = Parameters<ReturnType<ValidatorFactory>>[0];
  const withRealSchema = <R,>(route: R): R => ({ ...(route as object), schema: resolve((route as { schema?: unknown }).schema) }) as R;
  const buildValidator = ((externalSchemas: Parameters<ValidatorFactory>[0], ajvOptions: Parameters<ValidatorFactory>[1]) => {
    let compiler: ReturnType<ValidatorFactory> | undefined;
    return (route: RouteSchema): Validate => {
      let compiled: Validate | undefined;
      const get = (): Validate => (compiled ??= (compiler ??= validators(externalSchemas, ajvOptions))(withRealSchema(route)) as unknown as Validate);
      const validate = ((data: unknown, dataCxt?: unknown) => get()(data, dataCxt)) as Validate;
      Object.defineProperty(validate, 'errors', { get: () => get().errors, set: (v: unknown) => (get().errors = v), configurable: true });
      Object.defineProperty(validate, 'schemaEnv', { get: () => get().schemaEnv, configurable: true });
      return validate;
    };
  }) as unknown as ValidatorFactory;
  const buildSerializer: SerializerFactory = (externalSchemas, serializerOptions) => {
    let compiler: ReturnType<SerializerFactory> | undefined;
    return (route) => {
      let compiled: ((doc: unknown) => string) | undefined;
      return (doc: unknown) => (compiled ??= (compiler ??= serializers(externalSchemas, serializerOptions))(withRealSchema(route)))(doc);
    };
  };
  return { compilersFactory: { buildValidator, buildSerializer } };
}

/**
 * The OpenAPI document and Swagger UI live in a second fastify instance built on the first docs request (they load
 * @fastify/swagger, its YAML writer, Swagger UI's assets and @fastify/static); the main app forwards to it.
 */
function apiDocs(table: RouteTable, prefix: string): (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> {
  let docs: Promise<FastifyInstance> | undefined;
  const build = async (): Promise<FastifyInstance> => {
    const [{ default: swagger }, { default: swaggerUi }, routes] = await Promise.all([import('@fastify/swagger'), import('@fastify/swagger-ui'), table.loadAll(), loadSchemaCompilers()]);
    const instance = Fastify({ logger: false, routerOptions: { ignoreTrailingSlash: true, maxParamLength: 2048 }, schemaController: lazySchemaController() });
    await instance.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: { title: 'Bindery API', version: VERSION, description: 'Grimmory-compatible book library API' },
        components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
      },
    });
    await instance.register(swaggerUi, { routePrefix: `${prefix}/api/docs`, uiConfig: { url: `${prefix}/api/openapi.json` } });
    await instance.register(
      async (scope) => {
        for (const spec of routes) {
          scope.route({ method: spec.method, url: fastifyPath(spec.url), ...(spec.schema ? { schema: spec.schema } : {}), handler: () => undefined });
        }
        scope.get('/api/openapi.json', { schema: { hide: true } }, () => instance.swagger());
      },
      { prefix },
    );
    await instance.ready();
    return instance;
  };
  return async (request, reply) => {
    const instance = await (docs ??= build().catch((error: unknown) => {
      docs = undefined;
      throw error;
    }));
    const res = await instance.inject({ method: request.method as 'GET', url: request.url, headers: request.headers });
    for (const [name, value] of Object.entries(res.headers)) {
      if (value !== undefined && !['connection', 'transfer-encoding', 'keep-alive', 'date'].includes(name.toLowerCase())) reply.header(name, value);
    }
    return reply.status(res.statusCode).send(res.rawPayload.length > 0 ? res.rawPayload : undefined);
  };
}

/**
 * Stand-ins for a route's schemas, one empty object per part, registered before its module is loaded: fastify builds
 * a validator (or serializer) for each part it sees, and the lazy controller swaps in the real schema, found through
 * the stand-in, when the first request compiles it. By then the route's group is loaded (see the onRequest hook).
 */
class SchemaStandIns {
  private readonly real = new WeakMap<object, () => unknown>();
  private readonly table: RouteTable;

  constructor(table: RouteTable) {
    this.table = table;
  }

  for(head: RouteHead): Record<string, unknown> | undefined {
    if (!head.parts && !head.responses) return undefined;
    const schemaOf = (): Record<string, unknown> => {
      const spec = this.table.specOf(head);
      if (!spec) throw new Error(`schema of ${head.method} ${head.url} asked for before its routes were loaded`);
      return (spec.schema ?? {}) as Record<string, unknown>;
    };
    const schema: Record<string, unknown> = {};
    for (const part of head.parts ?? []) schema[part] = this.standIn(() => schemaOf()[part satisfies SchemaPart]);
    if (head.responses) {
      schema.response = Object.fromEntries(head.responses.map((code) => [code, this.standIn(() => (schemaOf().response as Record<string, unknown>)[code])]));
    }
    return schema;
  }

  resolve = (schema: unknown): unknown => (typeof schema === 'object' && schema !== null ? (this.real.get(schema)?.() ?? schema) : schema);

  private standIn(real: () => unknown): object {
    const placeholder = {};
    this.real.set(placeholder, real);
    return placeholder;
  }
}

export async function buildApp(options: BuildAppOptions): Promise<BuiltApp> {
  const { config, store } = options;
  const prefix = config.basePath;
  const table = options.routes ? RouteTable.of(options.routes) : new RouteTable(ROUTE_MANIFEST, ROUTE_GROUPS);
  const eager = options.lazySchemas === false;
  if (eager) await table.loadAll();
  const standIns = new SchemaStandIns(table);
  const app = Fastify({
    logger: options.logger ?? false,
    trustProxy: config.trustProxy,
    genReqId: requestIds(),
    ...(options.logger ? { childLoggerFactory: requestLogger } : {}),
    bodyLimit: 16 * 1024 * 1024,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 2048 },
    ajv: AJV_OPTIONS,
    ...(eager ? {} : { schemaController: lazySchemaController(standIns.resolve) }),
  });
  if (options.logger) app.log.debug({ redact: REDACTED_HEADERS }, 'logger ready');

  const ctx: DaemonContext = {
    config,
    store,
    paths: dataPaths(config),
    jwtSecret: await signingSecret(store.db),
    log: app.log,
    http: createHttpClient({ allowPrivateHosts: allowedPrivateHosts(config) }),
    background: new Set(),
  };

  registerCors(app, config.allowedOrigins);

  // Form bodies, only for the routes that take them (OIDC back-channel logout, the mobile OIDC callback).
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (request, body, done) => {
    if ((request.routeOptions.config as { formBody?: boolean } | undefined)?.formBody !== true) {
      done(Object.assign(new Error('Unsupported Media Type'), { statusCode: 415 }), undefined);
      return;
    }
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  // Any other media type: the request stream itself, unread, only for the routes that take raw bytes (rawBody).
  app.addContentTypeParser('*', (request, payload, done) => {
    if ((request.routeOptions.config as { rawBody?: boolean } | undefined)?.rawBody !== true) {
      done(Object.assign(new Error(`Unsupported Media Type: ${request.headers['content-type'] ?? ''}`), { statusCode: 415 }), undefined);
      return;
    }
    done(null, payload);
  });

  // Grimmory sends these on every response (the PDF reader's threaded WASM needs a cross-origin-isolated page).
  // Then the request waits for its slice of the event loop's turn (request-pacer.ts), before any work of its own.
  const pacer = new RequestPacer();
  app.server.on('connection', () => pacer.accepted());
  app.addHook('onRequest', (request, reply, done) => {
    // One header at a time: reply.headers() makes an array of the names on every request.
    for (const name in ISOLATION_HEADERS) reply.header(name, ISOLATION_HEADERS[name as keyof typeof ISOLATION_HEADERS]);
    pacer.admit(done, request.raw);
  });
  app.addHook('onResponse', (_request, _reply, done) => {
    pacer.finished();
    done();
  });
  // A page just built is kept as the route made it, before compression (registered after) encodes it for this client.
  app.addHook('onSend', (request, reply, payload, done) => {
    done(null, keepPage(request, reply, ctx, payload));
  });
  if (config.compressResponses) registerCompression(app);

  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof ApiError) return reply.status(error.status).send(errorBody(error.status, error.message, error.details));
    // The password pool's queue is full: shed the sign-in rather than queue it (any route that checks a password).
    if (error instanceof PasswordBusyError) return reply.status(503).header('retry-after', '1').send(errorBody(503, error.message));
    if (error.validation) {
      const details = error.validation.map((v) => `${(v.instancePath || v.params?.missingProperty || error.validationContext || '').toString().replace(/^\//, '').replace(/\//g, '.') || error.validationContext}: ${v.message ?? 'invalid'}`);
      return reply.status(400).send(errorBody(400, 'Validation error', details));
    }
    const status = error.statusCode ?? 500;
    if (error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || (status === 400 && error instanceof SyntaxError)) {
      return reply.status(400).send(errorBody(400, 'Request body is missing or malformed.'));
    }
    if (status >= 400 && status < 500) return reply.status(status).send(errorBody(status, error.message));
    if (isDatabaseUnavailable(error)) {
      request.log.error({ err: error }, 'request failed: the catalog database cannot be reached');
      return reply
        .status(503)
        .header('retry-after', String(DATABASE_RETRY_AFTER_S))
        .send(errorBody(503, 'The catalog database cannot be reached right now; try again shortly.'));
    }
    const storage = storageFailureOf(error, config.dataDir);
    if (storage) {
      // 507 Insufficient Storage for a full disk; a read-only or failing one is "unavailable" until someone fixes it.
      const code = storage.problem === 'full' ? 507 : 503;
      request.log.error({ err: error, directory: storage.directory, cause: storage.cause }, 'request failed: the disk cannot be written');
      return reply.status(code).send(errorBody(code, `The server cannot save changes: ${describeStorageFailure(storage)}.`));
    }
    request.log.error({ err: error }, 'request failed');
    return reply.status(500).send(errorBody(500, 'An unexpected error occurred.'));
  });

  const docs = apiDocs(table, prefix);
  // Upload routes get @fastify/multipart in a scope of their own: its hooks then run for uploads only.
  const uploads = table.heads.filter((head) => head.multipart);
  const multipart = uploads.length > 0 ? (await import('@fastify/multipart')).default : undefined;
  await app.register(
    async (scope) => {
      const addRoute = (target: FastifyInstance, head: RouteHead): void => {
        // Who is calling (401) and whether the route's rule admits them (403) are both settled on request, before the
        // body is read or the query validated: a caller without the permission never gets a 400 that tells them what
        // the route accepts. (Grimmory's `@PreAuthorize` runs after validation; this order is deliberate.)
        const schema = eager ? table.specOf(head)?.schema : standIns.for(head);
        // Kept here once loaded: the per-request path reads a local instead of looking the route up again.
        let spec = table.specOf(head);
        const cachedPage = isCachedPageRoute(head);
        const shelf = shelfKindOf(head);
        // Who is calling and whether the rule admits them, the route's module and the schema compilers: a promise only
        // while there is something to wait for (a route that signs in itself, once loaded, has nothing).
        const admit = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
          const refused = await authenticate(head, request as RouteRequest, reply, ctx);
          if (refused) return refused;
          // The route's module and the schema compilers, before the body is validated against the module's schema.
          spec ??= await table.load(head);
          if (!schemaCompilers && schema) await loadSchemaCompilers();
          return undefined;
        };
        target.route({
          method: head.method,
          url: fastifyPath(head.url),
          ...(schema ? { schema } : {}),
          ...(head.bodyLimit ? { bodyLimit: head.bodyLimit } : {}),
          ...(head.formBody || head.rawBody ? { config: { formBody: head.formBody === true, rawBody: head.rawBody === true } } : {}),
          onRequest: (request, reply, done) => {
            if (spec && (!schema || schemaCompilers)) {
              // A caller whose token and principal are kept (most requests) is settled without admit's promises.
              const refused = authenticateAtOnce(head, request as RouteRequest, reply, ctx);
              if (refused === undefined) done();
              if (refused !== NOT_KNOWN_AT_ONCE) return;
            }
            admit(request, reply).then((refused) => refused || done(), done);
          },
          // A cached page is looked up once sign-in and the route's rule (onRequest) have let the caller in.
          preHandler: cachedPage ? (request, reply, done) => answerFromPageCache(request as RouteRequest, reply, ctx, shelf, done) : undefined,
          // A build slot is freed when the page is sent, or at the latest when the request ends however it ends.
          onResponse: cachedPage ? (request, _reply, done) => (leaveBuild(request, ctx), done()) : undefined,
          onRequestAbort: cachedPage ? (request, done) => (leaveBuild(request, ctx), done()) : undefined,
          handler: (request, reply) => (spec as RouteSpec).handler(request as RouteRequest, reply, ctx),
        });
      };
      for (const head of table.heads) if (!head.multipart) addRoute(scope, head);
      if (multipart) {
        await scope.register(async (uploadScope) => {
          await uploadScope.register(multipart, { limits: { files: 1, fields: 20, parts: 40 } });
          for (const head of uploads) addRoute(uploadScope, head);
        });
      }
      scope.get('/api/openapi.json', { schema: { hide: true } }, docs);
      scope.get('/api/docs', { schema: { hide: true } }, docs);
      scope.get('/api/docs/*', { schema: { hide: true } }, docs);
    },
    { prefix },
  );

  app.setNotFoundHandler((request, reply) => {
    const inside = prefix === '' || request.url === prefix || /^[/?]/.test(request.url.slice(prefix.length)) && request.url.startsWith(prefix);
    const path = request.url.slice(prefix.length);
    // The single-page app gets every other GET; the API, Komga and the websocket keep their own 404.
    if (!inside || /^\/(api|komga|ws)(\/|\?|$)/.test(path)) {
      return reply.status(404).send(errorBody(404, 'Resource not found.'));
    }
    return registerWebRoot.fallback(config, request, reply);
  });
  if (config.webRoot) await registerWebRoot(app, config);

  // Live updates: STOMP over WebSocket at /ws (the web UI); Komga's SSE stream is a route of the komga group.
  acceptLiveUpgrades(app, ctx);
  // Open live connections would keep the server from closing: they end first.
  app.addHook('preClose', async () => {
    const { existingLiveHub } = await import('./live/live-hub.ts');
    existingLiveHub(ctx)?.close();
  });

  // A listening daemon (not the tests' injected requests) gives memory back while it is idle.
  let stopCompacting: (() => void) | undefined;
  app.addHook('onListen', async () => {
    // bin/bindery starts `serve` with V8's optimizing compilers off: they come on with the first request of the API
    // (health checks and the web UI's static files not counted), or once the daemon gets busy from 3 s after it
    // listens (a scheduled scan, work after another process changed the catalog), not for its own periodic work.
    optimizeOnFirstApiRequest(app.server);
    stopCompacting ??= compactWhenIdle({ onBusy: () => optimizeFromNowOn(), afterStartUp: growHeapForServing });
  });
  app.addHook('onClose', async () => stopCompacting?.());
  // Komga series pages read figures kept per series (src/core/komga/series-figures.ts): the series a migration, a scan
  // or another process left stale are worked out in the background, once the daemon listens and then after every
  // change of the catalog, not by the first pages. Without the Komga API nothing reads them: the log of stale series is
  // only shrunk to a row per series, so that it stays bounded however long the daemon runs.
  let figures: CatalogChangeWatch | undefined;
  app.addHook('onListen', async () => {
    const { watchCatalogChanges } = await import('./catalog-change-watch.ts');
    // The Komga code is loaded only when there is work for it (a series logged; with the API off, a series logged more
    // than once): an idle daemon does not carry it.
    figures = watchCatalogChanges(
      store,
      options.seriesFiguresLookMs ?? SERIES_FIGURES_LOOK_MS,
      async (stop) => {
        const { readSetting } = await import('../core/settings/app-settings.ts');
        const komga = (await readSetting(store.db, 'KOMGA_API_ENABLED')) === true;
        const pending = komga ? 'SELECT 1 AS logged FROM komga_series_stale LIMIT 1' : 'SELECT 1 AS logged FROM komga_series_stale GROUP BY library_id, series_key HAVING count(*) > 1 LIMIT 1';
        if ((await store.exec.get(pending)) === undefined) return;
        const { compactStaleLog, fillStale } = await import('../core/komga/series-figures.ts');
        await (komga ? fillStale(store, stop) : compactStaleLog(store, stop));
      },
      (error) => ctx.log.warn({ err: error }, 'Komga series figures: look skipped'),
    );
  });
  app.addHook('onClose', async () => figures?.stop());

  app.addHook('onClose', async () => {
    // A library scan can take minutes: stop it (it resumes on the next scan) rather than hold up shutdown.
    const { existingScanJobs } = await import('../core/libraries/library-scan-jobs.ts');
    await existingScanJobs(store)?.cancelAll();
    const [{ existingTaskRunner }, { schedulerOf }] = await Promise.all([import('./metadata-runtime.ts'), import('./scheduler.ts')]);
    schedulerOf(ctx)?.stop();
    existingTaskRunner(ctx)?.cancelAll();
    await Promise.allSettled([...ctx.background]);
  });
  return { app, ctx, routes: table };
}

export type { Config };

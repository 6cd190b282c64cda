// bindery serve: the HTTP daemon, in the foreground (systemd-friendly).
import type { Command } from 'commander';
import type { FastifyInstance } from 'fastify';
import type { Store } from '../core/store/store.ts';
import type { CommandContext } from './context.ts';
import { CliError, EXIT } from './exit-codes.ts';
import type { RunCommand } from './run.ts';
import { VERSION } from '../version.ts';

interface ServeFlags {
  port?: string;
  host?: string;
  basePath?: string;
  webRoot?: string;
  bookdropDir?: string;
  workers?: string;
}

function loggerOptions(ctx: CommandContext): object | false {
  if (ctx.config.logLevel === 'silent') return false;
  const redact = { paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-auth-key"]'], censor: '[redacted]' };
  // Kobo tokens travel in the path: log the route shape, never the token.
  const serializers = {
    req: (req: { method: string; url: string; id: string }) => ({ method: req.method, url: req.url.replace(/\/api\/kobo\/[^/]+/, '/api/kobo/[token]').replace(/([?&]token=)[^&]+/, '$1[redacted]'), id: req.id }),
  };
  const base = { level: ctx.config.logLevel, redact, serializers };
  if (process.stdout.isTTY) return { ...base, transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss' } } };
  return base;
}

/** The first administrator from BINDERY_ADMIN_USERNAME / _PASSWORD / _PASSWORD_FILE / _EMAIL, when the catalog has no user. */
async function seedAdmin(store: Store): Promise<{ username: string } | undefined> {
  const { seedAdminFromEnv } = await import('../core/users/seed-admin.ts');
  const { UserError } = await import('../core/users/users.ts');
  try {
    return await seedAdminFromEnv(store.db, process.env);
  } catch (error) {
    if (!(error instanceof UserError)) throw error;
    throw new CliError('INVALID_ADMIN_SEED', `cannot create the administrator from the environment: ${(error as Error).message}`, EXIT.USAGE);
  }
}

function workerCount(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return 1;
  const n = Number(value);
  return Number.isInteger(n) && n >= 1 && n <= 64 ? n : undefined;
}

/** How long requests in flight (a large download, a stream) may take to finish once a stop was asked for. */
const DRAIN_MS = 25_000;
const EXIT_GRACE_MS = 2_000;

/**
 * Resolves after SIGTERM or SIGINT once the server has stopped: no new connections, requests in flight finish (for at
 * most DRAIN_MS, then their connections are cut), background jobs are awaited (onClose). A second signal exits at once.
 */
function untilStopped(app: FastifyInstance): Promise<void> {
  return new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals): void => {
      if (stopping) {
        app.log.warn({ signal }, 'second stop signal: exiting without waiting');
        process.exit(EXIT.FAILURE);
      }
      stopping = true;
      app.log.info({ signal }, 'shutting down: finishing requests in flight');
      const cut = setTimeout(() => {
        app.log.warn({ afterMs: DRAIN_MS }, 'requests still running: closing their connections');
        app.server.closeAllConnections();
      }, DRAIN_MS);
      cut.unref();
      // A keep-alive connection whose last response ends during the drain would otherwise idle until its timeout.
      const idle = setInterval(() => app.server.closeIdleConnections(), 200);
      const done = (): void => {
        clearTimeout(cut);
        clearInterval(idle);
        resolve();
      };
      app.close().then(done, (error: unknown) => {
        app.log.error({ err: error }, 'error while shutting down');
        done();
      });
    };
    process.on('SIGTERM', stop);
    // A worker of `serve --workers` stops when its supervisor says so; Ctrl-C reaches the supervisor too, which then
    // tells each worker once.
    if (process.env.BINDERY_WORKER) process.on('SIGINT', () => undefined);
    else process.on('SIGINT', stop);
  });
}

export function registerServe(program: Command, run: RunCommand): void {
  program
    .command('serve')
    .description('run the HTTP server (Grimmory-compatible API) in the foreground')
    .option('--port <port>', 'port to listen on (env BINDERY_PORT, default 6060)')
    .option('--host <host>', 'address to listen on (env BINDERY_HOST, default 0.0.0.0)')
    .option('--base-path <path>', 'URL prefix behind a reverse proxy (env BINDERY_BASE_PATH)')
    .option('--web-root <dir>', 'serve a web UI build from this folder (env BINDERY_WEB_ROOT)')
    .option('--bookdrop-dir <dir>', 'the bookdrop folder to watch (env BINDERY_BOOKDROP_DIR, default <data dir>/bookdrop)')
    .option('--workers <n>', 'run N worker processes sharing the port (env BINDERY_WORKERS, default 1); a dead worker is restarted')
    .action(async (flags: ServeFlags) => {
      const workers = workerCount(flags.workers ?? process.env.BINDERY_WORKERS);
      if (workers === undefined) {
        process.stderr.write('bindery: --workers must be a whole number from 1 to 64\n');
        process.exitCode = EXIT.USAGE;
        return;
      }
      // node:cluster (~1 MB resident) only when workers are asked for: their processes inherit the setting.
      if (workers > 1 && (await import('node:cluster')).default.isPrimary) {
        const { superviseWorkers } = await import('./serve-workers.ts');
        process.exitCode = await superviseWorkers(workers);
        return;
      }
      await run(async (baseCtx) => {
        const ctx = baseCtx.withFlags({ port: flags.port, host: flags.host, basePath: flags.basePath, webRoot: flags.webRoot, bookdropDir: flags.bookdropDir });
        // The catalog opens (and migrates) while the HTTP modules load.
        // Interrupted file moves are recovered by whichever process takes the move-recovery lease (below).
        const [{ buildApp }, store] = await Promise.all([import('../daemon/app.ts'), ctx.store({ recoverMoves: false })]);
        const seeded = await seedAdmin(store);
        const built = await buildApp({ config: ctx.config, store, logger: loggerOptions(ctx) });
        const { app } = built;
        if (seeded) app.log.info({ username: seeded.username }, 'created the first administrator from BINDERY_ADMIN_* environment variables');
        // The data directory is marked as in use (restore refuses to run beside a daemon) until the app has closed.
        const [{ markDaemonPresence }, { prepareDataDir }] = await Promise.all([import('../core/daemon-presence.ts'), import('../core/store/file-modes.ts')]);
        // On PostgreSQL nothing else has made the data directory (covers, caches) yet.
        prepareDataDir(ctx.config.dataDir);
        const unmarkPresence = markDaemonPresence(ctx.config.dataDir, ctx.config.port);
        app.addHook('onClose', async () => unmarkPresence());
        // The singletons (scheduler, bookdrop watcher, move recovery, outbox clean-up, Hardcover push) start once the
        // server answers, in whichever process holds their leases, and stop (handing the leases over) before the
        // catalog closes.
        let singletons: Promise<{ close(): Promise<void> } | undefined> = Promise.resolve(undefined);
        app.addHook('onClose', async () => {
          await (await singletons)?.close();
        });
        try {
          await app.listen({ port: ctx.config.port, host: ctx.config.host });
        } catch (error) {
          await app.close();
          const code = (error as NodeJS.ErrnoException).code;
          if (code === 'EADDRINUSE') throw new CliError('PORT_IN_USE', `port ${ctx.config.port} is already in use on ${ctx.config.host}`, EXIT.FAILURE);
          if (code === 'EACCES') throw new CliError('PORT_DENIED', `not allowed to listen on port ${ctx.config.port}`, EXIT.FAILURE);
          throw error;
        }
        app.log.info(
          { version: VERSION, dataDir: ctx.config.dataDir, runtime: '__binderyBundle' in globalThis ? 'bundle' : 'source', startupMs: Math.round(performance.now()) },
          'bindery is ready',
        );
        singletons = import('../daemon/singletons.ts')
          .then(({ startSingletons }) => startSingletons(built.ctx))
          .catch((error: unknown) => {
            app.log.error({ err: error }, 'singleton jobs could not start');
            return undefined;
          });
        await untilStopped(app);
        app.log.info('stopped');
      });
      // Everything is closed; whatever still holds the event loop (a stuck socket, a log transport) must not keep a
      // stopped service alive.
      setTimeout(() => process.exit(), EXIT_GRACE_MS).unref();
    });
}

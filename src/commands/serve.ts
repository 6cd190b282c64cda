// bindery serve: the HTTP daemon, in the foreground (systemd-friendly).
import type { Command } from 'commander';
import type { CommandContext } from './context.ts';
import { CliError, EXIT } from './exit-codes.ts';
import type { RunCommand } from './run.ts';

interface ServeFlags {
  port?: string;
  host?: string;
  basePath?: string;
  webRoot?: string;
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

export function registerServe(program: Command, run: RunCommand): void {
  program
    .command('serve')
    .description('run the HTTP server (Grimmory-compatible API) in the foreground')
    .option('--port <port>', 'port to listen on (env BINDERY_PORT, default 6060)')
    .option('--host <host>', 'address to listen on (env BINDERY_HOST, default 0.0.0.0)')
    .option('--base-path <path>', 'URL prefix behind a reverse proxy (env BINDERY_BASE_PATH)')
    .option('--web-root <dir>', 'serve a web UI build from this folder (env BINDERY_WEB_ROOT)')
    .action((flags: ServeFlags) =>
      run(async (baseCtx) => {
        const ctx = baseCtx.withFlags({ port: flags.port, host: flags.host, basePath: flags.basePath, webRoot: flags.webRoot });
        const { buildApp } = await import('../daemon/app.ts');
        const store = await ctx.store();
        const { app } = await buildApp({ config: ctx.config, store, logger: loggerOptions(ctx) });
        try {
          await app.listen({ port: ctx.config.port, host: ctx.config.host });
        } catch (error) {
          await app.close();
          const code = (error as NodeJS.ErrnoException).code;
          if (code === 'EADDRINUSE') throw new CliError('PORT_IN_USE', `port ${ctx.config.port} is already in use on ${ctx.config.host}`, EXIT.FAILURE);
          if (code === 'EACCES') throw new CliError('PORT_DENIED', `not allowed to listen on port ${ctx.config.port}`, EXIT.FAILURE);
          throw error;
        }
        await new Promise<void>((resolve) => {
          const stop = (signal: string): void => {
            app.log.info({ signal }, 'shutting down: finishing requests in flight');
            app.close().then(resolve, resolve);
          };
          process.once('SIGTERM', () => stop('SIGTERM'));
          process.once('SIGINT', () => stop('SIGINT'));
        });
      }),
    );
}

// Request ids and each request's logger. Fastify gives every request an id and a child of the daemon's logger bound to
// it; both used to cost more than the rest of a kept page's own work (a random UUID, and a pino child that serializes
// its bindings when made: ~5 % of what a kept page allocated; docs/benchmarks.md, "Session 11: fairness of kept pages").
// What the logs show is unchanged: every line about a request carries its id, the client's X-Request-Id when it sent
// one (up to 64 characters), else an id unique across processes and restarts.
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { randomUUID } from 'node:crypto';

/** Longest X-Request-Id taken from a client. */
const CLIENT_ID_MAX = 64;

/**
 * A source of request ids shaped like random UUIDs: a random one made at start, its last 12 hex digits counting up from
 * a random point. Unique across processes (the 116 other bits are random) without random bytes per request.
 */
export function requestIds(): (req: IncomingMessage) => string {
  const stem = randomUUID().slice(0, 24);
  let count = Math.floor(Math.random() * 2 ** 40);
  return (req) => {
    const sent = req.headers['x-request-id'];
    if (typeof sent === 'string') return sent.slice(0, CLIENT_ID_MAX);
    count = (count + 1) % 2 ** 48;
    return stem + count.toString(16).padStart(12, '0');
  };
}

type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';
type LogArguments = Parameters<FastifyBaseLogger['info']>;
type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildOptions = NonNullable<Parameters<FastifyBaseLogger['child']>[1]>;
/** pino's loggers also answer whether a level is enabled. */
type LevelAware = FastifyBaseLogger & { isLevelEnabled?: (level: string) => boolean };

/**
 * A request's logger: pino's child bound to the request, made the first time something is logged at a level that is
 * enabled (at the default level, fastify's own lines about each request; otherwise only a warning or an error).
 */
class RequestLogger {
  readonly #parent: LevelAware;
  readonly #bindings: Bindings;
  readonly #options: ChildOptions;
  #child: LevelAware | undefined;

  constructor(parent: LevelAware, bindings: Bindings, options: ChildOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  #real(): LevelAware {
    return (this.#child ??= this.#parent.child(this.#bindings, this.#options) as LevelAware);
  }

  #log(level: Level, args: LogArguments): void {
    if (!this.isLevelEnabled(level)) return;
    (this.#real()[level] as (...args: LogArguments) => void)(...args);
  }

  isLevelEnabled(level: string): boolean {
    const logger = this.#child ?? this.#parent;
    return (logger.isLevelEnabled as (level: string) => boolean)(level);
  }

  get level(): string {
    return (this.#child ?? this.#parent).level;
  }

  set level(level: string) {
    this.#real().level = level;
  }

  trace(...args: LogArguments): void {
    this.#log('trace', args);
  }

  debug(...args: LogArguments): void {
    this.#log('debug', args);
  }

  info(...args: LogArguments): void {
    this.#log('info', args);
  }

  warn(...args: LogArguments): void {
    this.#log('warn', args);
  }

  error(...args: LogArguments): void {
    this.#log('error', args);
  }

  fatal(...args: LogArguments): void {
    this.#log('fatal', args);
  }

  silent(): void {}

  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options);
  }

  bindings(): Bindings {
    return (this.#real() as FastifyBaseLogger & { bindings: () => Bindings }).bindings();
  }
}

/**
 * Fastify's childLoggerFactory: a RequestLogger, or pino's child at once when the route sets a level of its own or the
 * logger cannot tell whether a level is enabled.
 */
export const requestLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (logger, bindings, options) => {
  const parent = logger as LevelAware;
  if (options.level !== undefined || typeof parent.isLevelEnabled !== 'function') return logger.child(bindings, options);
  return new RequestLogger(parent, bindings, options) as unknown as FastifyBaseLogger;
};

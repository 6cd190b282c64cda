// Telling "the database cannot be reached right now" (a PostgreSQL restart or failover, a network cut, a full pool)
// apart from a bug: such requests are answered 503 with Retry-After, and the pool reconnects on its own.
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[123]|53300)$/; // connection exceptions, admin/crash shutdown, cannot connect now, too many connections
const NETWORK_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ENOENT']);
/** Socket calls (a Unix socket that is gone fails `connect` with ENOENT); file errors come from other calls. */
const SOCKET_CALLS = new Set(['connect', 'read', 'write', 'getaddrinfo']);
// How node-postgres words a dropped connection or a pool that could not hand one out in time.
const POOL_MESSAGE = /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable|Cannot use a pool after calling end/i;

function* chain(error: unknown): Generator<unknown> {
  const seen = new Set<unknown>();
  for (let e = error; e !== undefined && e !== null && !seen.has(e); e = (e as { cause?: unknown }).cause) {
    seen.add(e);
    yield e;
  }
}

/** Whether an error (or one of its causes) means the catalog database is unreachable for now. */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (const e of chain(error)) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (UNAVAILABLE_SQLSTATE.test(code)) return true;
      // A socket error of the database client: pg errors carry a syscall (connect, read, write).
      if (NETWORK_ERRNO.has(code) && SOCKET_CALLS.has(String((e as { syscall?: unknown }).syscall))) return true;
    }
    if (e instanceof Error && POOL_MESSAGE.test(e.message)) return true;
  }
  return false;
}

/** Seconds a client should wait before trying again. */
export const DATABASE_RETRY_AFTER_S = 5;

// PostgreSQL liveness (see liveness.ts): an owner is alive while the advisory lock of its token is held by some
// session of this database, or, on this machine, while its pid runs.
import { currentOwner, ownerAlive } from '../process-owner.ts';
import { useSession } from './advisory-session.ts';
import type { Liveness } from './liveness.ts';
import type { SqlExec } from './sql-exec.ts';

/** Advisory locks marking live owners: this first key, the hash of the owner's token as the second. */
const LIVENESS_SPACE = 0x6c697665; // "live"
/** How soon a lost registration is taken again. */
const RETRY_MS = 1000;

const LOCK = 'select pg_try_advisory_lock($1, hashtext($2)) as ok';
const HELD = `select 1 as held from pg_locks where locktype = 'advisory' and granted and classid = CAST(? AS bigint)::oid
  and objid = (hashtext(CAST(? AS text))::bigint & 4294967295)::oid and objsubid = 2
  and database = (select oid from pg_database where datname = current_database()) limit 1`;

export function postgresLiveness(url: string, exec: SqlExec): Liveness {
  const me = currentOwner();
  let use: ReturnType<typeof useSession> | undefined;
  /** The session epoch under which the lock was taken; undefined while not registered. */
  let lockedIn: number | undefined;
  let locking: Promise<number> | undefined;
  let retry: NodeJS.Timeout | undefined;
  let stopWatching: (() => void) | undefined;
  let closed = false;

  const lock = (): Promise<number> => {
    const { session } = use as ReturnType<typeof useSession>;
    if (lockedIn === session.epoch && session.connected) return Promise.resolve(lockedIn);
    locking ??= (async () => {
      try {
        for (let attempt = 1; ; attempt++) {
          // The epoch before the statement: a connection lost while it ran took the lock with it.
          const epoch = session.epoch;
          const rows = await session.query<{ ok: boolean }>(LOCK, [LIVENESS_SPACE, me.token]);
          // Only another session holding the same key refuses it: a second process with this token cannot exist.
          if (!rows[0]?.ok) throw new Error('the liveness lock of this process is held by another session');
          if (session.epoch === epoch && session.connected) {
            lockedIn = epoch;
            return epoch;
          }
          if (attempt === 3) throw new Error('the connection to the catalog database keeps dropping; this process cannot register as running');
        }
      } finally {
        locking = undefined;
      }
    })();
    return locking;
  };

  // Once registered, a lost connection is made good at once (not at the next registration), so that other processes
  // stop seeing this one as dead as soon as the database answers again.
  const relock = (): void => {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      lock().catch(relock);
    }, RETRY_MS);
    retry.unref();
  };

  return {
    async register() {
      if (closed) throw new Error('the catalog is closed');
      if (!use) {
        use = useSession(url, me.token, `${me.host}:${me.pid}`);
        stopWatching = use.session.onDrop(relock);
      }
      const epoch = await lock();
      const { session } = use;
      return { owner: me, held: () => session.epoch === epoch };
    },
    async alive(owner) {
      if (ownerAlive(owner)) return true;
      // This process's own token under another pid or host is no record of a live process.
      if (typeof owner.token !== 'string' || owner.token === me.token) return false;
      return (await exec.get(HELD, [LIVENESS_SPACE, owner.token])) !== undefined;
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      stopWatching?.();
      await use?.done();
    },
  };
}

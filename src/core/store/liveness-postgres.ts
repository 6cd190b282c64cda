// PostgreSQL liveness (see liveness.ts): a registered owner is alive while the advisory lock named in its record is
// held by some session of this database. Each connection the process registers on takes a lock under a new random
// key: work recorded before a lost connection stays dead for good, even once the process has registered again.
import { randomUUID } from 'node:crypto';
import { currentOwner, ownerAlive, processToken } from '../process-owner.ts';
import { useSession } from './advisory-session.ts';
import { samePidHere, type Liveness } from './liveness.ts';
import type { SqlExec } from './sql-exec.ts';

/** Advisory locks marking live owners: this first key, the hash of the owner's token as the second. */
const LIVENESS_SPACE = 0x6c697665; // "live"
/** How soon a lost registration is taken again. */
const RETRY_MS = 1000;

const LOCK = 'select pg_try_advisory_lock($1, hashtext($2)) as ok';
const HELD = `select 1 as held from pg_locks where locktype = 'advisory' and granted and classid = CAST(? AS bigint)::oid
  and objid = (hashtext(CAST(? AS text))::bigint & 4294967295)::oid and objsubid = 2
  and database = (select oid from pg_database where datname = current_database()) limit 1`;

/**
 * Every token this process has registered under (whatever store): a record naming one of them is this process, even
 * where another process shares its host name, boot and pid (containers on one machine with the host's name).
 */
const ownTokens = new Set<string>();

interface Lock {
  token: string;
  /** The session epoch it was taken in: it lasts as long as that connection. */
  epoch: number;
}

export function postgresLiveness(url: string, exec: SqlExec): Liveness {
  let use: ReturnType<typeof useSession> | undefined;
  let held: Lock | undefined;
  let locking: Promise<Lock> | undefined;
  let retry: NodeJS.Timeout | undefined;
  let stopWatching: (() => void) | undefined;
  let closed = false;

  const lock = (): Promise<Lock> => {
    const { session } = use as ReturnType<typeof useSession>;
    if (held && held.epoch === session.epoch && session.connected) return Promise.resolve(held);
    locking ??= (async () => {
      try {
        for (let attempt = 1; ; attempt++) {
          // The epoch before the statement: a connection lost while it ran took the lock with it.
          const next = { token: randomUUID(), epoch: session.epoch };
          const rows = await session.query<{ ok: boolean }>(LOCK, [LIVENESS_SPACE, next.token]);
          if (rows[0]?.ok && session.epoch === next.epoch && session.connected) {
            held = next;
            ownTokens.add(next.token);
            return next;
          }
          if (attempt === 3) throw new Error('the connection to the catalog database keeps dropping; this process cannot register as running');
        }
      } finally {
        locking = undefined;
      }
    })();
    return locking;
  };

  // Once registered, a lost connection is made good at once (not at the next registration), so that work this
  // process starts next is seen running as soon as the database answers again.
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
        const me = currentOwner();
        use = useSession(url, processToken(), `${me.host}:${me.pid}`);
        stopWatching = use.session.onDrop(relock);
      }
      const { token, epoch } = await lock();
      const { session } = use;
      return { owner: { ...currentOwner(), token }, held: () => session.epoch === epoch };
    },
    async alive(owner) {
      if (typeof owner.token !== 'string') return ownerAlive(owner);
      return (await exec.get(HELD, [LIVENESS_SPACE, owner.token])) !== undefined;
    },
    isThisProcess: (owner) => (typeof owner.token === 'string' ? ownTokens.has(owner.token) : samePidHere(owner)),
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      stopWatching?.();
      await use?.done();
    },
  };
}

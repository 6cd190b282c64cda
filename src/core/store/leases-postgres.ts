// PostgreSQL leases: a session advisory lock per lease on one connection of this process's own, outside the pool. The
// server releases the locks as soon as that connection ends, so a killed holder's leases are free at once; TCP
// keep-alives (both ways) make a vanished machine's connection end within about 20 s.
import pg from 'pg';
import { eraseHolder, holdingOf, recordHolder, SELECT_LEASES, type LeaseInstance, type LeaseRow, type Leases } from './leases.ts';
import type { SqlExec } from './sql-exec.ts';

/** Advisory locks of Bindery's leases: this first key, the hash of the lease name as the second. */
const LOCK_SPACE = 0x62696e64; // "bind"
const KEEPALIVE = 'SET tcp_keepalives_idle = 5; SET tcp_keepalives_interval = 5; SET tcp_keepalives_count = 3';

export function postgresLeases(url: string, exec: SqlExec, me: LeaseInstance): Leases {
  let client: pg.Client | undefined;
  let connecting: Promise<pg.Client> | undefined;
  const held = new Set<string>();
  let closed = false;

  const drop = (dead: pg.Client): void => {
    if (client !== dead) return;
    client = undefined;
    connecting = undefined;
    // The server let go of every lock with the connection.
    held.clear();
    void dead.end().catch(() => undefined);
  };

  const connection = (): Promise<pg.Client> => {
    if (client) return Promise.resolve(client);
    connecting ??= (async () => {
      const next = new pg.Client({ connectionString: url, application_name: `bindery-lease ${me.name}`.slice(0, 63), keepAlive: true, keepAliveInitialDelayMillis: 5000, query_timeout: 10_000, connectionTimeoutMillis: 10_000 });
      next.on('error', () => drop(next));
      next.on('end', () => drop(next));
      try {
        await next.connect();
        await next.query(KEEPALIVE);
      } catch (error) {
        connecting = undefined;
        void next.end().catch(() => undefined);
        throw error;
      }
      client = next;
      return next;
    })();
    return connecting;
  };

  return {
    instance: me,
    async hold(lease) {
      if (closed) return false;
      let c: pg.Client;
      try {
        c = await connection();
        if (held.has(lease)) {
          // Still connected means still locked.
          await c.query('select 1');
          return held.has(lease);
        }
        const result = await c.query<{ ok: boolean }>('select pg_try_advisory_lock($1, hashtext($2)) as ok', [LOCK_SPACE, lease]);
        if (!result.rows[0]?.ok) return false;
      } catch {
        if (client) drop(client);
        return false;
      }
      held.add(lease);
      try {
        await recordHolder(exec, lease, me);
      } catch (error) {
        // Holding a lease nobody can see is not holding it: let it go and try again later.
        held.delete(lease);
        await c.query('select pg_advisory_unlock($1, hashtext($2))', [LOCK_SPACE, lease]).catch(() => undefined);
        throw error;
      }
      return true;
    },
    async release(lease) {
      if (!held.delete(lease)) return;
      await eraseHolder(exec, lease, me).catch(() => undefined);
      await client?.query('select pg_advisory_unlock($1, hashtext($2))', [LOCK_SPACE, lease]).catch(() => undefined);
    },
    async holdings() {
      const rows = (await exec.all(SELECT_LEASES)) as unknown as LeaseRow[];
      // A lock is alive while some session holds it (the advisory lock's second key shows as an unsigned oid).
      const locked = new Set(
        (
          (await exec.all(
            `select l.name from lease l join pg_locks k on k.locktype = 'advisory' and k.granted and k.classid = CAST(? AS bigint)::oid
               and k.objid = (hashtext(l.name)::bigint & 4294967295)::oid and k.objsubid = 2`,
            [LOCK_SPACE],
          )) as { name: string }[]
        ).map((r) => r.name),
      );
      return rows.map((row) => holdingOf(row, me, locked.has(row.name)));
    },
    async close() {
      closed = true;
      for (const lease of [...held]) await this.release(lease);
      const c = client;
      client = undefined;
      held.clear();
      await c?.end().catch(() => undefined);
    },
  };
}

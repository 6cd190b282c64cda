// PostgreSQL leases: a session advisory lock per lease on the process's own advisory-lock session (see
// advisory-session.ts), so a killed holder's leases are free at once.
import { useSession } from './advisory-session.ts';
import { eraseHolder, holdingOf, recordHolder, SELECT_LEASES, type LeaseInstance, type LeaseRow, type Leases } from './leases.ts';
import type { SqlExec } from './sql-exec.ts';

/** Advisory locks of Bindery's leases: this first key, the hash of the lease name as the second. */
const LOCK_SPACE = 0x62696e64; // "bind"

export function postgresLeases(url: string, exec: SqlExec, me: LeaseInstance): Leases {
  const { session, done } = useSession(url, me.token, me.name);
  const held = new Set<string>();
  // The server let go of every lock with the connection.
  const stopWatching = session.onDrop(() => held.clear());
  let closed = false;

  return {
    instance: me,
    async hold(lease) {
      if (closed) return false;
      try {
        if (held.has(lease)) {
          // Still connected means still locked.
          await session.query('select 1');
          return held.has(lease);
        }
        const rows = await session.query<{ ok: boolean }>('select pg_try_advisory_lock($1, hashtext($2)) as ok', [LOCK_SPACE, lease]);
        if (!rows[0]?.ok) return false;
      } catch {
        return false;
      }
      held.add(lease);
      try {
        await recordHolder(exec, lease, me);
      } catch (error) {
        // Holding a lease nobody can see is not holding it: let it go and try again later.
        held.delete(lease);
        await session.query('select pg_advisory_unlock($1, hashtext($2))', [LOCK_SPACE, lease]).catch(() => undefined);
        throw error;
      }
      return true;
    },
    async release(lease) {
      if (!held.delete(lease)) return;
      await eraseHolder(exec, lease, me).catch(() => undefined);
      if (session.connected) await session.query('select pg_advisory_unlock($1, hashtext($2))', [LOCK_SPACE, lease]).catch(() => undefined);
    },
    async holdings() {
      const rows = (await exec.all(SELECT_LEASES)) as unknown as LeaseRow[];
      // A lock is alive while some session of this database holds it (the second key shows as an unsigned oid).
      const locked = new Set(
        (
          (await exec.all(
            `select l.name from lease l join pg_locks k on k.locktype = 'advisory' and k.granted and k.classid = CAST(? AS bigint)::oid
               and k.objid = (hashtext(l.name)::bigint & 4294967295)::oid and k.objsubid = 2
               and k.database = (select oid from pg_database where datname = current_database())`,
            [LOCK_SPACE],
          )) as { name: string }[]
        ).map((r) => r.name),
      );
      return rows.map((row) => holdingOf(row, me, locked.has(row.name)));
    },
    async close() {
      closed = true;
      for (const lease of [...held]) await this.release(lease);
      held.clear();
      stopWatching();
      await done();
    },
  };
}

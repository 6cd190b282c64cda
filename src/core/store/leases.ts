// Leases on the catalog: which server process runs each singleton job. A holder never renews its lease by writing,
// because every write to the catalog makes every process drop its caches; instead each engine notices a dead holder
// on its own terms:
// - SQLite: every process sharing the file runs on one machine (WAL needs shared memory), so a lease is held while the
//   process named in its row runs (host, boot and pid, as move journals are checked);
// - PostgreSQL: the holder keeps a session advisory lock on a connection of its own; the server drops the lock the
//   moment that connection ends (a killed process, or TCP keep-alives giving up on a dead machine).
// The row names the holder for people (health and task routes) and is written only when the lease changes hands.
import type { Selectable } from 'kysely';
import { ownerAlive, type Owner } from '../process-owner.ts';
import { nowIso } from '../time.ts';
import type { LeaseTable } from './db-types.ts';
import type { SqlExec } from './sql-exec.ts';

/** This process, as the leases know it. */
export interface LeaseInstance extends Owner {
  /** Shown to people: BINDERY_INSTANCE_NAME, or host:pid. */
  name: string;
  /** Unique to this process start. */
  token: string;
}

export interface LeaseHolding {
  lease: string;
  holder: string;
  acquiredAt: string;
  /** Whether the holder is known to run now (a dead holder's row stays until another process takes the lease). */
  alive: boolean;
  /** Held by this process. */
  mine: boolean;
}

export interface Leases {
  readonly instance: LeaseInstance;
  /**
   * Takes the lease when it is free or its holder is gone; true while this process holds it. Called again, it checks
   * that the lease is still held (false: it was lost, e.g. the database connection dropped).
   */
  hold(lease: string): Promise<boolean>;
  /** Gives the lease up at once (a clean shutdown), so another process takes it on its next look. */
  release(lease: string): Promise<void>;
  holdings(): Promise<LeaseHolding[]>;
  close(): Promise<void>;
}

export type LeaseRow = Selectable<LeaseTable>;

export const SELECT_LEASES = 'select name, holder, holder_token, host, boot, pid, acquired_at from lease order by name';

/** Writes this process in as the holder (one statement, so a row and its holder never disagree). */
export async function recordHolder(exec: SqlExec, lease: string, me: LeaseInstance): Promise<void> {
  await exec.run(
    `insert into lease (name, holder, holder_token, host, boot, pid, acquired_at) values (?, ?, ?, ?, ?, ?, ?)
     on conflict (name) do update set holder = excluded.holder, holder_token = excluded.holder_token, host = excluded.host,
       boot = excluded.boot, pid = excluded.pid, acquired_at = excluded.acquired_at`,
    [lease, me.name, me.token, me.host, me.boot, me.pid, nowIso()],
  );
}

export async function eraseHolder(exec: SqlExec, lease: string, me: LeaseInstance): Promise<void> {
  await exec.run('delete from lease where name = ? and holder_token = ?', [lease, me.token]);
}

export function holdingOf(row: LeaseRow, me: LeaseInstance, alive: boolean): LeaseHolding {
  return { lease: row.name, holder: row.holder, acquiredAt: row.acquired_at, alive, mine: row.holder_token === me.token && alive };
}

interface SqliteLeaseStore {
  exec: SqlExec;
  write<T>(writer: (scope: { exec: SqlExec }) => Promise<T>): Promise<T>;
}

/** SQLite: a lease is held while its holder's process runs on this machine. */
export function sqliteLeases(store: SqliteLeaseStore, me: LeaseInstance): Leases {
  const holderAlive = (row: LeaseRow): boolean => row.holder_token === me.token || ownerAlive(row);
  const current = async (exec: SqlExec, lease: string): Promise<LeaseRow | undefined> =>
    (await exec.get('select name, holder, holder_token, host, boot, pid, acquired_at from lease where name = ?', [lease])) as LeaseRow | undefined;
  return {
    instance: me,
    async hold(lease) {
      // The usual look (held by us, or by a live process) is one read and takes no write lock.
      const seen = await current(store.exec, lease);
      if (seen) {
        if (seen.holder_token === me.token) return true;
        if (ownerAlive(seen)) return false;
      }
      return store.write(async ({ exec }) => {
        const row = await current(exec, lease);
        if (row && holderAlive(row)) return row.holder_token === me.token;
        await recordHolder(exec, lease, me);
        return true;
      });
    },
    release: (lease) => Promise.resolve(eraseHolder(store.exec, lease, me)),
    async holdings() {
      const rows = (await store.exec.all(SELECT_LEASES)) as unknown as LeaseRow[];
      return rows.map((row) => holdingOf(row, me, holderAlive(row)));
    },
    close: () => Promise.resolve(),
  };
}

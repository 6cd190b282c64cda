// Which process on which boot of which machine holds something (a move batch, the data directory), and whether that
// process still runs on this machine. (Whether an owner runs anywhere, when the catalog is shared by several machines,
// is the store's question: store/liveness.ts.)
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname, uptime } from 'node:os';

export interface Owner {
  host: string;
  boot: string;
  pid: number;
  /**
   * PostgreSQL: the key of the advisory lock the owner held while it ran (see store/liveness.ts). Absent on SQLite and
   * from records written before it was kept.
   */
  token?: string;
}

const token = randomUUID();

/** Unique to this process start, on every machine. */
export function processToken(): string {
  return token;
}

let bootId: string | undefined;

/** Identifies this boot of this machine, so a pid recorded before a reboot is never mistaken for a live process. */
function currentBoot(): string {
  if (bootId === undefined) {
    try {
      bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      // Boot time to the minute: stable for the life of the machine's uptime on platforms without a boot id.
      bootId = `t${Math.round((Date.now() / 1000 - uptime()) / 60)}`;
    }
  }
  return bootId;
}

export function currentOwner(): Owner {
  return { host: hostname(), boot: currentBoot(), pid: process.pid };
}

/**
 * Whether a recorded owner is a process running now on this machine. An owner recorded under another host name or
 * boot counts as gone: for a SQLite catalog, only ever used from one machine (its WAL needs shared memory), that is an
 * earlier incarnation of this machine (a re-created container, a reboot).
 */
export function ownerAlive(owner: Partial<Owner>): boolean {
  const me = currentOwner();
  if (owner.host !== me.host || owner.boot !== me.boot || typeof owner.pid !== 'number') return false;
  if (owner.pid === me.pid) return true;
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
}

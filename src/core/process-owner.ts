// Which process on which boot of which machine holds something (a move batch, the data directory), and whether that
// process still runs.
import { readFileSync } from 'node:fs';
import { hostname, uptime } from 'node:os';

export interface Owner {
  host: string;
  boot: string;
  pid: number;
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
 * Whether a recorded owner is a process running now. A catalog is only ever used from one machine (SQLite's WAL needs
 * shared memory), so an owner recorded under another host name or boot is an earlier incarnation of this one (a
 * re-created container, a reboot): its process is gone.
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

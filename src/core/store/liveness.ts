// Whether the process that recorded itself as the owner of some work (a move batch, a bookdrop import) still runs.
// Each engine answers on its own terms:
// - SQLite: every process using the catalog runs on one machine (WAL needs shared memory), so an owner is alive while
//   its pid runs on this boot of this host; an owner recorded under another host name or boot is an earlier
//   incarnation of this machine (a re-created container, a reboot) and is gone;
// - PostgreSQL: processes on several machines share the catalog. A process that records itself as an owner first
//   takes a session advisory lock, on a connection of its own (advisory-session.ts), and records the lock's key (its
//   token); the owner is alive exactly as long as the lock, which lasts as long as that connection: a killed process,
//   or one on a vanished machine, lets go of it, and a live process on another machine is seen holding it. Owners
//   recorded without a token (before Bindery recorded one) are judged by host, boot and pid as on SQLite.
import { currentOwner, ownerAlive, type Owner } from '../process-owner.ts';

/** This process registered as a live owner, for the work it is about to record. */
export interface Registration {
  /** What to write down as the owner of the work. */
  owner: Owner;
  /**
   * False once the registration was lost (PostgreSQL: its connection dropped) since it was made: other processes may
   * already take this process for dead and recover its work, so the work must stop as if the process had crashed.
   */
  held(): boolean;
}

export interface Liveness {
  /** Registers this process (PostgreSQL: takes its lock, kept until the store closes) and names it as an owner. */
  register(): Promise<Registration>;
  /** Whether the process named by a recorded owner runs now, on any machine sharing the catalog. */
  alive(owner: Partial<Owner>): Promise<boolean>;
  /** Whether a recorded owner is this very process (which knows for itself what work it is doing). */
  isThisProcess(owner: Partial<Owner>): boolean;
  close(): Promise<void>;
}

/**
 * Thrown by work this process recorded under a registration it has since lost: other processes may already be
 * recovering that work, so it stops where it is, as a crash would, and leaves the rest to them.
 */
export class RegistrationLost extends Error {
  override name = 'RegistrationLost';
  constructor(work: string) {
    super(`this process lost its registration with the catalog database; the ${work} is left to recovery`);
  }
}

/** Throws RegistrationLost once `registration` is no longer held. */
export function ensureHeld(registration: Registration, work: string): void {
  if (!registration.held()) throw new RegistrationLost(work);
}

/** Host, boot and pid name this process (the only way on SQLite, and for records that carry no token). */
export function samePidHere(owner: Partial<Owner>): boolean {
  const me = currentOwner();
  return owner.pid === me.pid && owner.host === me.host && owner.boot === me.boot;
}

/** SQLite: host, boot and pid say it all. */
export const localLiveness: Liveness = {
  register: () => Promise.resolve({ owner: currentOwner(), held: () => true }),
  alive: (owner) => Promise.resolve(ownerAlive(owner)),
  isThisProcess: samePidHere,
  close: () => Promise.resolve(),
};

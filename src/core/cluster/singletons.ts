// Jobs that must run in exactly one server process of all those sharing a catalog (replicas on several machines,
// workers on one): each runs in whichever process holds its lease. Every process looks every few seconds; a process
// that gains a lease starts the job, one that loses it (its database connection dropped) stops it, and another takes
// over once the holder is gone.
import type { LeaseHolding, Leases } from '../store/leases.ts';

/** What a singleton job gives back when started: how to stop it. */
export type StopSingleton = () => Promise<void> | void;

export interface Singleton {
  name: string;
  start(): Promise<StopSingleton>;
}

export interface SingletonLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

export interface SingletonOptions {
  /** How often leases are looked at (default 2 s; BINDERY_LEASE_CHECK_MS). */
  everyMs?: number;
  log: SingletonLog;
}

export const DEFAULT_LEASE_CHECK_MS = 2000;

export class SingletonKeeper {
  private readonly leases: Leases;
  private readonly singletons: readonly Singleton[];
  private readonly everyMs: number;
  private readonly log: SingletonLog;
  private readonly stops = new Map<string, StopSingleton>();
  private timer: NodeJS.Timeout | undefined;
  private looking: Promise<void> | undefined;
  private closed = false;

  constructor(leases: Leases, singletons: readonly Singleton[], options: SingletonOptions) {
    this.leases = leases;
    this.singletons = singletons;
    this.everyMs = options.everyMs ?? DEFAULT_LEASE_CHECK_MS;
    this.log = options.log;
  }

  get instance(): string {
    return this.leases.instance.name;
  }

  /** The first look is awaited: a process alone on its catalog starts every job before this returns. */
  async start(): Promise<void> {
    await this.look();
    this.schedule();
  }

  /** The singletons this process runs now. */
  running(): string[] {
    return [...this.stops.keys()].sort();
  }

  holdings(): Promise<LeaseHolding[]> {
    return this.leases.holdings();
  }

  /** Stops this process's jobs and hands their leases over (a clean shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.looking;
    for (const name of this.running()) await this.stop(name, 'shutting down');
    await this.leases.close();
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.looking = this.look().finally(() => this.schedule());
    }, this.everyMs);
    this.timer.unref();
  }

  private async look(): Promise<void> {
    for (const singleton of this.singletons) {
      if (this.closed) return;
      let held: boolean;
      try {
        held = await this.leases.hold(singleton.name);
      } catch (error) {
        this.log.warn({ err: error, singleton: singleton.name }, 'lease check failed');
        held = false;
      }
      const running = this.stops.has(singleton.name);
      if (held && !running) await this.begin(singleton);
      else if (!held && running) await this.stop(singleton.name, 'lease lost');
    }
  }

  private async begin(singleton: Singleton): Promise<void> {
    this.log.info({ singleton: singleton.name, instance: this.instance }, 'lease taken: starting');
    try {
      this.stops.set(singleton.name, await singleton.start());
    } catch (error) {
      // Kept as running, lease and all: another process would fail the same way (an unwatchable folder, a bad cron).
      this.log.warn({ err: error, singleton: singleton.name }, 'singleton could not start');
      this.stops.set(singleton.name, () => undefined);
    }
  }

  private async stop(name: string, why: string): Promise<void> {
    const stop = this.stops.get(name);
    this.stops.delete(name);
    this.log.info({ singleton: name, instance: this.instance, why }, 'stopping singleton');
    try {
      await stop?.();
    } catch (error) {
      this.log.warn({ err: error, singleton: name }, 'singleton did not stop cleanly');
    }
    if (why === 'shutting down') await this.leases.release(name).catch(() => undefined);
  }
}

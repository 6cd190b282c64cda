// bcrypt on a small pool of worker threads with a bounded queue: a password check never blocks the thread that answers
// requests, and a flood of sign-in attempts is refused (PasswordBusyError) instead of queueing without end.
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { lazyPool } from '../worker-pool.ts';
import { PasswordBusyError } from './password-busy.ts';
import type { PasswordTask } from './password-worker.ts';

/** bcrypt's cost factor, as Grimmory (Spring's BCryptPasswordEncoder default) uses, so hashes carry over unchanged. */
export const BCRYPT_ROUNDS = 10;

/** Leaves a core for the event loop on small machines; two threads are plenty for sign-ins. */
export const PASSWORD_THREADS = Math.max(1, Math.min(2, availableParallelism() - 1));

/** Checks waiting for a thread beyond this are refused: at ~100 ms each, a longer queue only adds waiting. */
export const PASSWORD_QUEUE_LIMIT = 16 * PASSWORD_THREADS;

const pool = lazyPool({
  filename: new URL('./password-worker.ts', import.meta.url).href,
  minThreads: 0,
  maxThreads: PASSWORD_THREADS,
  // Idle threads are unreferenced by the pool (a CLI process still exits) and end after a minute without work.
  idleTimeout: 60_000,
  maxQueue: PASSWORD_QUEUE_LIMIT,
  resourceLimits: { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 32 },
  recordTiming: false,
});

async function run<T extends string | boolean>(task: PasswordTask): Promise<T> {
  const workers = await pool.started();
  if (workers.queueSize >= PASSWORD_QUEUE_LIMIT) throw new PasswordBusyError();
  try {
    return (await workers.run(task)) as T;
  } catch (error) {
    // The pool's own refusal when its queue is full, should it count differently from the check above.
    if (error instanceof Error && /queue is at limit/i.test(error.message)) throw new PasswordBusyError();
    throw error;
  }
}

/** bcrypt hash of the password, made on the pool. */
export function hashPassword(password: string): Promise<string> {
  return run<string>({ op: 'hash', password, rounds: BCRYPT_ROUNDS });
}

/** True when the password matches the bcrypt hash; false for a malformed hash. */
export function verifyPassword(password: string, hash: string): Promise<boolean> {
  return run<boolean>({ op: 'verify', password, hash });
}

let dummy: Promise<string> | undefined;

/**
 * A hash of nothing in particular with the cost of real ones: checking a password for a name that does not exist
 * against it takes as long as a wrong password for one that does, so answer times do not tell which names exist.
 */
export function dummyHash(): Promise<string> {
  if (!dummy) {
    dummy = hashPassword(randomBytes(16).toString('hex'));
    // A refused or failed hash is made again next time (the handler is attached once, not on every call).
    dummy.catch(() => (dummy = undefined));
  }
  return dummy;
}

/** Threads and queue of the pool, for benchmarks and tests. */
export function passwordPoolState(): { threads: number; queued: number } {
  return { threads: pool.current()?.threads.length ?? 0, queued: pool.current()?.queueSize ?? 0 };
}

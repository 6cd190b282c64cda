// Worker-thread entry of the password pool: bcrypt work, kept off the thread that answers requests.
import bcrypt from 'bcryptjs';
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

const PASSWORD_THREAD_NICE = 10;

/**
 * Lowers this thread's scheduling priority (Linux: a thread id given to setpriority names that thread only), so that on
 * a busy machine a flood of password checks takes CPU from other password checks rather than from the thread that
 * answers everyone's requests. Elsewhere, or where it is not allowed, the thread keeps the normal priority.
 */
function yieldToRequests(): void {
  try {
    const threadId = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(threadId) && threadId > 0) setPriority(threadId, PASSWORD_THREAD_NICE);
  } catch {
    // Not Linux, or not permitted: nothing to do.
  }
}

yieldToRequests();

export type PasswordTask = { op: 'hash'; password: string; rounds: number } | { op: 'verify'; password: string; hash: string };

export default function run(task: PasswordTask): string | boolean {
  if (task.op === 'hash') return bcrypt.hashSync(task.password, task.rounds);
  try {
    return bcrypt.compareSync(task.password, task.hash);
  } catch {
    // A malformed stored hash matches nothing.
    return false;
  }
}

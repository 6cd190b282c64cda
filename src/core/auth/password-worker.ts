// Worker-thread entry of the password pool: bcrypt work, kept off the thread that answers requests.
import bcrypt from 'bcryptjs';

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

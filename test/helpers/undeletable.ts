// A folder whose files cannot be removed, for real: as root (whom permissions do not stop) by the immutable
// attribute, otherwise by taking away write permission. Returns the undo, or undefined when neither works here.
import { execFileSync } from 'node:child_process';
import { chmodSync } from 'node:fs';

export function makeUndeletable(dir: string): (() => void) | undefined {
  if (process.getuid?.() !== 0) {
    chmodSync(dir, 0o555);
    return () => chmodSync(dir, 0o755);
  }
  try {
    execFileSync('chattr', ['+i', dir], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  return () => execFileSync('chattr', ['-i', dir], { stdio: 'ignore' });
}

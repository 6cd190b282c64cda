// Dry runs: the real writes in one transaction, rolled back at the end, so a dry run reports exactly what a real run
// would do (each step sees the steps before it) and leaves nothing behind.
import type { Store, WriteScope } from './store.ts';

class Rehearsed<T> {
  readonly value: T;
  constructor(value: T) {
    this.value = value;
  }
}

export async function rehearse<T>(store: Store, writer: (scope: WriteScope) => Promise<T>): Promise<T> {
  try {
    await store.write(async (scope) => {
      throw new Rehearsed(await writer(scope));
    });
  } catch (outcome) {
    if (outcome instanceof Rehearsed) return outcome.value as T;
    throw outcome;
  }
  throw new Error('unreachable: a rehearsal always rolls back');
}

/** A real write, or its rehearsal. */
export function writeOrRehearse<T>(store: Store, dryRun: boolean, writer: (scope: WriteScope) => Promise<T>): Promise<T> {
  return dryRun ? rehearse(store, writer) : store.write(writer);
}

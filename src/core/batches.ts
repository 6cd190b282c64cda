// Work split so that long jobs on the daemon's thread let requests in: lists cut into pieces of a bounded size, and a
// promise that resolves after the event loop has turned once (its I/O handled).

/** `items` in consecutive pieces of at most `size`. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Resolves in the event loop's next check phase, after the I/O waiting now has been handled. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

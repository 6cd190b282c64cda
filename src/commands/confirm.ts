// Asking the person at the terminal before a command changes or deletes something. The prompt goes to stderr, so
// what the command prints on stdout stays clean.

/** True only for an explicit "y" or "yes"; anything else (an empty answer too) is a no. */
export async function confirm(question: string): Promise<boolean> {
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
  } finally {
    rl.close();
  }
}

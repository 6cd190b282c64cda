// Progress of a long import on stderr: a spinner on a terminal, a line every few seconds otherwise, nothing with --json.
import type { CommandContext } from './context.ts';

export interface ImportProgress {
  update(text: string): void;
  stop(): void;
}

export async function importProgress(ctx: CommandContext): Promise<ImportProgress> {
  if (ctx.json) return { update: () => {}, stop: () => {} };
  if (process.stderr.isTTY) {
    const { default: ora } = await import('ora');
    const spinner = ora({ text: 'starting', stream: process.stderr }).start();
    return { update: (text) => (spinner.text = text) && undefined, stop: () => spinner.stop() };
  }
  let last = 0;
  return {
    update: (text) => {
      const now = Date.now();
      if (now - last < 3000) return;
      last = now;
      process.stderr.write(`${text}\n`);
    },
    stop: () => {},
  };
}

// One changing status line for long commands: a spinner on a terminal, otherwise a plain line on stderr every few
// seconds (cron, systemd, CI logs); nothing with --json.
import type { CommandContext } from './context.ts';

export interface StatusLine {
  update(text: string): void;
  stop(): void;
}

export async function statusLine(ctx: CommandContext, first: string): Promise<StatusLine> {
  if (ctx.json) return { update: () => {}, stop: () => {} };
  if (process.stderr.isTTY) {
    const { default: ora } = await import('ora');
    const spinner = ora({ text: first, stream: process.stderr }).start();
    return {
      update: (text) => {
        spinner.text = text;
      },
      stop: () => spinner.stop(),
    };
  }
  let last = Date.now();
  return {
    update: (text) => {
      if (Date.now() - last < 3000) return;
      last = Date.now();
      process.stderr.write(`${text}\n`);
    },
    stop: () => {},
  };
}

export function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

// Runs one command body with a context, turning every outcome into output and an exit code.
import type { CommandContext, GlobalOptions } from './context.ts';
import { EXIT } from './exit-codes.ts';

export type CommandBody = (ctx: CommandContext) => Promise<number | void>;
export type RunCommand = (body: CommandBody) => Promise<void>;

export function commandRunner(globals: () => GlobalOptions): RunCommand {
  return async (body) => {
    let ctx: CommandContext | undefined;
    let exitCode: number;
    const json = globals().json ?? false;
    const { createContext, describeError } = await import('./context.ts');
    try {
      ctx = createContext(globals());
      exitCode = (await body(ctx)) ?? EXIT.OK;
    } catch (error) {
      const described = describeError(error, ctx?.config.dataDir);
      exitCode = described.exitCode;
      if (json) process.stdout.write(`${JSON.stringify({ error: { code: described.code, message: described.message } })}\n`);
      else process.stderr.write(`bindery: ${described.message}\n`);
      if (described.code === 'INTERNAL_ERROR' && process.env.BINDERY_DEBUG) console.error(error);
    } finally {
      await ctx?.close().catch(() => undefined);
    }
    process.exitCode = exitCode;
  };
}

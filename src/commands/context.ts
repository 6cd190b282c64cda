// What every command shares: settings, the catalog, output in text or JSON, and exit codes.
import { ConfigError, dataPaths, loadConfig, type Config } from '../core/config.ts';
import { LibraryError } from '../core/libraries/libraries.ts';
import { openStore, StoreError, type Store } from '../core/store/store.ts';

/** Documented in docs/cli.md; scripts depend on them. */
export const EXIT = {
  OK: 0,
  FAILURE: 1,
  USAGE: 2,
  NOT_FOUND: 3,
  CONFLICT: 4,
  PARTIAL: 5,
  STORE: 6,
} as const;

export class CliError extends Error {
  override name = 'CliError';
  readonly exitCode: number;
  readonly code: string;
  constructor(code: string, message: string, exitCode: number) {
    super(message);
    this.code = code;
    this.exitCode = exitCode;
  }
}

export interface GlobalOptions {
  dataDir?: string;
  config?: string;
  json?: boolean;
}

export interface CommandContext {
  config: Config;
  json: boolean;
  paths: ReturnType<typeof dataPaths>;
  interactive: boolean;
  /** Opens the catalog once per command run. */
  store(): Promise<Store>;
  close(): Promise<void>;
  print(text: string): void;
  printJson(value: unknown): void;
}

export function createContext(options: GlobalOptions): CommandContext {
  const config = loadConfig({ flags: { dataDir: options.dataDir }, configFile: options.config });
  const paths = dataPaths(config);
  let opened: Promise<Store> | undefined;
  return {
    config,
    json: options.json ?? false,
    paths,
    interactive: Boolean(process.stdout.isTTY && process.stdin.isTTY) && !options.json,
    store: () => (opened ??= openStore(paths.catalog)),
    close: async () => {
      if (opened) await (await opened).close();
    },
    print: (text) => process.stdout.write(`${text}\n`),
    printJson: (value) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`),
  };
}

/** Maps any error to its exit code and a one-line message. */
export function describeError(error: unknown): { code: string; message: string; exitCode: number } {
  if (error instanceof CliError) return { code: error.code, message: error.message, exitCode: error.exitCode };
  if (error instanceof ConfigError) return { code: 'INVALID_CONFIG', message: error.message, exitCode: EXIT.USAGE };
  if (error instanceof LibraryError) {
    const exitCode = error.code === 'NOT_FOUND' ? EXIT.NOT_FOUND : error.code === 'CONFLICT' ? EXIT.CONFLICT : EXIT.USAGE;
    return { code: `LIBRARY_${error.code}`, message: error.message, exitCode };
  }
  if (error instanceof StoreError) return { code: 'STORE_ERROR', message: error.message, exitCode: EXIT.STORE };
  const sqliteCode = (error as { code?: string }).code;
  if (typeof sqliteCode === 'string' && sqliteCode.startsWith('SQLITE_')) {
    return { code: sqliteCode, message: `catalog error: ${(error as Error).message}`, exitCode: EXIT.STORE };
  }
  return { code: 'INTERNAL_ERROR', message: error instanceof Error ? error.message : String(error), exitCode: EXIT.FAILURE };
}

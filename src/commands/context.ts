// What every command shares: settings, the catalog, output in text or JSON, and exit codes.
import { allowedPrivateHosts, ConfigError, dataPaths, loadConfig, type Config, type ConfigKey } from '../core/config.ts';
import { createHttpClient, type HttpClient } from '../core/net/http-client.ts';
import { LibraryError } from '../core/libraries/libraries.ts';
import type { RecoveryReport } from '../core/moves/recover.ts';
import { openCatalog, type OpenedCatalog } from '../core/open-catalog.ts';
import { describeStorageFailure, storageFailureOf } from '../core/store/storage-failure.ts';
import { StoreError, type Store } from '../core/store/store.ts';
import { CliError, EXIT } from './exit-codes.ts';

export { CliError, EXIT } from './exit-codes.ts';

export interface GlobalOptions {
  dataDir?: string;
  databaseUrl?: string;
  config?: string;
  json?: boolean;
}

export interface CommandContext {
  config: Config;
  /** The same context with more settings from command-specific flags (validated like the rest). */
  withFlags(flags: Partial<Record<ConfigKey, string | undefined>>): CommandContext;
  json: boolean;
  paths: ReturnType<typeof dataPaths>;
  interactive: boolean;
  /** The one client for outgoing requests, made on first use. */
  http(): HttpClient;
  /**
   * Opens the catalog once per command run. File moves a killed process left half done are completed or rolled back
   * first (one line each on stderr), so no command ever sees a half-moved file.
   */
  store(): Promise<Store>;
  /** What that recovery did, once the catalog is open (undefined: nothing was interrupted). */
  recoveredMoves(): Promise<RecoveryReport | undefined>;
  close(): Promise<void>;
  print(text: string): void;
  printJson(value: unknown): void;
}

export function createContext(options: GlobalOptions, extraFlags: Partial<Record<ConfigKey, string | undefined>> = {}): CommandContext {
  const config = loadConfig({ flags: { dataDir: options.dataDir, databaseUrl: options.databaseUrl, ...extraFlags }, configFile: options.config });
  const paths = dataPaths(config);
  let opened: Promise<OpenedCatalog> | undefined;
  const open = (): Promise<OpenedCatalog> => (opened ??= openCatalog(paths.catalog, { log: (message) => process.stderr.write(`bindery: ${message}\n`), poolSize: config.databasePoolSize }));
  let http: HttpClient | undefined;
  return {
    http: () => (http ??= createHttpClient({ allowPrivateHosts: allowedPrivateHosts(config) })),
    config,
    withFlags: (flags) => createContext(options, { ...extraFlags, ...flags }),
    json: options.json ?? false,
    paths,
    interactive: Boolean(process.stdout.isTTY && process.stdin.isTTY) && !options.json,
    store: async () => (await open()).store,
    recoveredMoves: async () => (await open()).recoveredMoves,
    close: async () => {
      if (opened) await (await opened).store.close();
    },
    print: (text) => process.stdout.write(`${text}\n`),
    printJson: (value) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`),
  };
}

const STORAGE_CODES = { full: 'STORAGE_FULL', 'read-only': 'STORAGE_READ_ONLY', io: 'STORAGE_IO_ERROR' } as const;

/**
 * Maps any error to its exit code and a one-line message. `dataDir` (when the settings were read) lets a full or
 * read-only disk be named: exit 6 with the directory and the cause, not a bare ENOSPC.
 */
export function describeError(error: unknown, dataDir?: string): { code: string; message: string; exitCode: number } {
  if (error instanceof CliError) return { code: error.code, message: error.message, exitCode: error.exitCode };
  const storage = dataDir !== undefined ? storageFailureOf(error, dataDir) : undefined;
  if (storage) {
    const detail = error instanceof Error ? error.message : String(error);
    return { code: STORAGE_CODES[storage.problem], message: `${describeStorageFailure(storage)} (${detail})`, exitCode: EXIT.STORE };
  }
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

// Settings: flags beat environment (BINDERY_*), which beats the config file, which beats defaults. Validated once.
import Type, { type Static } from 'typebox';
import { Value } from 'typebox/value';
import { existsSync, readFileSync } from 'node:fs';
import { homedir, availableParallelism } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

export const ConfigSchema = Type.Object(
  {
    dataDir: Type.String({ minLength: 1, description: 'Holds the catalog, covers and caches' }),
    databaseUrl: Type.String({ pattern: '^(|postgres(ql)?://.*)$', description: 'postgres://user:password@host:port/database to keep the catalog on PostgreSQL 15+; empty: the SQLite file in the data directory' }),
    databasePoolSize: Type.Integer({ minimum: 1, maximum: 1000, description: 'PostgreSQL connections one process holds at most' }),
    bookdropDir: Type.String({ minLength: 1, description: 'Folder watched for new books to import' }),
    port: Type.Integer({ minimum: 1, maximum: 65535, description: 'HTTP port of `bindery serve`' }),
    host: Type.String({ minLength: 1, description: 'Address `bindery serve` listens on' }),
    basePath: Type.String({ pattern: '^(/[^/]+)*$', description: 'URL prefix when served under a reverse-proxy sub-path' }),
    trustProxy: Type.Boolean({ description: 'Honour X-Forwarded-* headers' }),
    compressResponses: Type.Boolean({ description: 'Compress API answers and web UI assets (zstd, br, gzip) for clients that accept it' }),
    allowedOrigins: Type.String({ description: 'CORS origins, comma-separated, or *' }),
    webRoot: Type.Union([Type.String({ minLength: 1 }), Type.Null()], { description: 'Folder with a web UI build to serve at /' }),
    scanWorkers: Type.Integer({ minimum: 1, maximum: 64, description: 'Parallel file parsers during a scan' }),
    libraryWatchDelayMs: Type.Integer({ minimum: 0, maximum: 3_600_000, description: 'Watched libraries: quiet time after the last change, and time a changed file must keep its size, before its folder is rescanned' }),
    libraryWatchPollMs: Type.Integer({ minimum: 100, maximum: 3_600_000, description: 'Watched libraries on network filesystems (or past the inotify limit): how often each folder is looked at' }),
    outgoingAllowPrivateHosts: Type.String({ description: 'Hosts outgoing requests may reach although private or loopback (comma-separated): a LAN mirror; tests' }),
    metadataProviderBaseUrls: Type.String({ description: 'JSON object: metadata provider id → base URL replacing its public one (a mirror; tests)' }),
    koboStoreUrl: Type.String({ pattern: '^https?://', description: 'Kobo store API that unknown Kobo requests are forwarded to' }),
    auditLogRetentionDays: Type.Integer({ minimum: 0, maximum: 36500, description: 'Days of audit log kept (older entries are deleted); 0 keeps everything' }),
    backupDir: Type.String({ minLength: 1, description: 'Folder of `bindery backup` archives and of the scheduled backups' }),
    backupKeepDaily: Type.Integer({ minimum: 0, maximum: 3650, description: 'Scheduled backups kept: the newest of each of this many recent days' }),
    backupKeepWeekly: Type.Integer({ minimum: 0, maximum: 520, description: 'Scheduled backups kept: the newest of each of this many recent weeks' }),
    liveMaxConnections: Type.Integer({ minimum: 1, maximum: 100000, description: 'Live-update connections (WebSocket and SSE) the server holds at most' }),
    liveMaxConnectionsPerUser: Type.Integer({ minimum: 1, maximum: 100000, description: 'Live-update connections one user may hold at once' }),
    logLevel: Type.Union([Type.Literal('fatal'), Type.Literal('error'), Type.Literal('warn'), Type.Literal('info'), Type.Literal('debug'), Type.Literal('trace'), Type.Literal('silent')]),
  },
  { additionalProperties: false },
);

export type Config = Static<typeof ConfigSchema>;
export type ConfigKey = keyof Config;

interface SettingSource {
  env: string;
  kind: 'string' | 'integer' | 'boolean' | 'path';
}

const SOURCES: Record<ConfigKey, SettingSource> = {
  dataDir: { env: 'BINDERY_DATA_DIR', kind: 'path' },
  databaseUrl: { env: 'BINDERY_DATABASE_URL', kind: 'string' },
  databasePoolSize: { env: 'BINDERY_DATABASE_POOL_SIZE', kind: 'integer' },
  bookdropDir: { env: 'BINDERY_BOOKDROP_DIR', kind: 'path' },
  port: { env: 'BINDERY_PORT', kind: 'integer' },
  host: { env: 'BINDERY_HOST', kind: 'string' },
  basePath: { env: 'BINDERY_BASE_PATH', kind: 'string' },
  trustProxy: { env: 'BINDERY_TRUST_PROXY', kind: 'boolean' },
  compressResponses: { env: 'BINDERY_COMPRESS_RESPONSES', kind: 'boolean' },
  allowedOrigins: { env: 'BINDERY_ALLOWED_ORIGINS', kind: 'string' },
  webRoot: { env: 'BINDERY_WEB_ROOT', kind: 'path' },
  scanWorkers: { env: 'BINDERY_SCAN_WORKERS', kind: 'integer' },
  libraryWatchDelayMs: { env: 'BINDERY_LIBRARY_WATCH_DELAY_MS', kind: 'integer' },
  libraryWatchPollMs: { env: 'BINDERY_LIBRARY_WATCH_POLL_MS', kind: 'integer' },
  outgoingAllowPrivateHosts: { env: 'BINDERY_OUTGOING_ALLOW_PRIVATE_HOSTS', kind: 'string' },
  metadataProviderBaseUrls: { env: 'BINDERY_METADATA_PROVIDER_BASE_URLS', kind: 'string' },
  koboStoreUrl: { env: 'BINDERY_KOBO_STORE_URL', kind: 'string' },
  auditLogRetentionDays: { env: 'BINDERY_AUDIT_LOG_RETENTION_DAYS', kind: 'integer' },
  backupDir: { env: 'BINDERY_BACKUP_DIR', kind: 'path' },
  backupKeepDaily: { env: 'BINDERY_BACKUP_KEEP_DAILY', kind: 'integer' },
  backupKeepWeekly: { env: 'BINDERY_BACKUP_KEEP_WEEKLY', kind: 'integer' },
  liveMaxConnections: { env: 'BINDERY_LIVE_MAX_CONNECTIONS', kind: 'integer' },
  liveMaxConnectionsPerUser: { env: 'BINDERY_LIVE_MAX_CONNECTIONS_PER_USER', kind: 'integer' },
  logLevel: { env: 'BINDERY_LOG_LEVEL', kind: 'string' },
};

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Where the data lives when nobody says: systemd's StateDirectory, /var/lib/bindery for a root service,
 * otherwise the XDG data home.
 */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.STATE_DIRECTORY) return env.STATE_DIRECTORY.split(':')[0] as string;
  if (env.INVOCATION_ID && process.getuid?.() === 0) return '/var/lib/bindery';
  const xdg = env.XDG_DATA_HOME && isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : join(homedir(), '.local', 'share');
  return join(xdg, 'bindery');
}

/** The config file to read: given explicitly, or the first that exists of the user's and the system's. */
export function configFilePath(explicit: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const given = explicit ?? env.BINDERY_CONFIG;
  if (given) return resolve(given);
  const xdg = env.XDG_CONFIG_HOME && isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : join(homedir(), '.config');
  return [join(xdg, 'bindery', 'config.json'), '/etc/bindery/config.json'].find((p) => existsSync(p));
}

function parseValue(key: ConfigKey, raw: string, origin: string): unknown {
  const { kind } = SOURCES[key];
  if (kind === 'integer') {
    if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(`${key} must be a whole number (got "${raw}" from ${origin})`);
    return Number(raw);
  }
  if (kind === 'boolean') {
    const v = raw.trim().toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(v)) return true;
    if (['0', 'false', 'no', 'off'].includes(v)) return false;
    throw new ConfigError(`${key} must be true or false (got "${raw}" from ${origin})`);
  }
  if (kind === 'path') return raw === '' ? null : resolve(raw);
  return raw;
}

function readConfigFile(path: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    const why = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : (error as Error).message;
    throw new ConfigError(`cannot read config file ${path}: ${why}`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new ConfigError(`config file ${path} must hold a JSON object`);
  for (const key of Object.keys(parsed)) {
    if (!(key in SOURCES)) throw new ConfigError(`config file ${path}: unknown setting "${key}" (known: ${Object.keys(SOURCES).join(', ')})`);
  }
  return parsed as Record<string, unknown>;
}

export interface LoadConfigInput {
  /** Values from command-line flags, already named by config key; undefined means "not given". */
  flags?: Partial<Record<ConfigKey, string | number | boolean | undefined>>;
  configFile?: string;
  env?: NodeJS.ProcessEnv;
}

export function loadConfig(input: LoadConfigInput = {}): Config {
  const env = input.env ?? process.env;
  const filePath = configFilePath(input.configFile, env);
  const fromFile = filePath ? readConfigFile(filePath) : {};
  const merged: Record<string, unknown> = {};

  for (const key of Object.keys(SOURCES) as ConfigKey[]) {
    const flag = input.flags?.[key];
    const envValue = env[SOURCES[key].env];
    if (flag !== undefined) merged[key] = typeof flag === 'string' ? parseValue(key, flag, `--${kebab(key)}`) : flag;
    else if (envValue !== undefined) merged[key] = parseValue(key, envValue, SOURCES[key].env);
    else if (key in fromFile) {
      const v = fromFile[key];
      merged[key] = SOURCES[key].kind === 'path' && typeof v === 'string' ? resolve(v) : v;
    }
  }

  const dataDir = (merged.dataDir as string | undefined) ?? defaultDataDir(env);
  const config = {
    dataDir,
    databaseUrl: '',
    databasePoolSize: 10,
    bookdropDir: join(dataDir, 'bookdrop'),
    port: 6060,
    host: '0.0.0.0',
    basePath: '',
    trustProxy: false,
    compressResponses: true,
    allowedOrigins: '*',
    webRoot: null,
    // One core stays with the main thread (catalog writes); each worker overlaps several files.
    scanWorkers: Math.max(1, Math.min(8, availableParallelism() - 1)),
    libraryWatchDelayMs: 3000,
    libraryWatchPollMs: 10_000,
    outgoingAllowPrivateHosts: '',
    metadataProviderBaseUrls: '',
    koboStoreUrl: 'https://storeapi.kobo.com',
    auditLogRetentionDays: 90,
    backupDir: join(dataDir, 'backups'),
    backupKeepDaily: 7,
    backupKeepWeekly: 4,
    liveMaxConnections: 1000,
    liveMaxConnectionsPerUser: 20,
    logLevel: 'info',
    ...merged,
  };
  if (typeof config.metadataProviderBaseUrls === 'string') metadataProviderBaseUrls(config as Pick<Config, 'metadataProviderBaseUrls'>);
  if (!Value.Check(ConfigSchema, config)) {
    const problems = [...Value.Errors(ConfigSchema, config)].map((e) => `${e.instancePath.slice(1) || 'config'} ${e.message}`);
    throw new ConfigError(`invalid settings: ${[...new Set(problems)].join('; ')}`);
  }
  return config;
}

function kebab(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** Files under the data directory. */
export function dataPaths(config: Pick<Config, 'dataDir'> & Partial<Pick<Config, 'databaseUrl'>>): { catalog: string; covers: string; cache: string; tmp: string } {
  return {
    /** The SQLite file, or the PostgreSQL URL when one is set. */
    catalog: config.databaseUrl || join(config.dataDir, 'bindery.sqlite'),
    covers: join(config.dataDir, 'covers'),
    cache: join(config.dataDir, 'cache'),
    tmp: join(config.dataDir, 'tmp'),
  };
}

/** The outgoing client's allow list from `outgoingAllowPrivateHosts`. */
export function allowedPrivateHosts(config: Pick<Config, 'outgoingAllowPrivateHosts'>): string[] {
  return config.outgoingAllowPrivateHosts.split(',').map((host) => host.trim()).filter(Boolean);
}

/** `metadataProviderBaseUrls` parsed: provider id → base URL; empty when unset. Throws ConfigError when malformed. */
export function metadataProviderBaseUrls(config: Pick<Config, 'metadataProviderBaseUrls'>): Record<string, string> {
  const raw = config.metadataProviderBaseUrls.trim();
  if (raw === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError('metadataProviderBaseUrls must be a JSON object such as {"Google":"http://127.0.0.1:8080"}');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new ConfigError('metadataProviderBaseUrls must be a JSON object');
  const out: Record<string, string> = {};
  for (const [id, url] of Object.entries(parsed)) {
    if (typeof url !== 'string' || !/^https?:\/\//.test(url)) throw new ConfigError(`metadataProviderBaseUrls.${id} must be an http(s) URL`);
    out[id] = url;
  }
  return out;
}

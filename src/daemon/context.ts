// What every route handler can reach.
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../core/config.ts';
import type { dataPaths } from '../core/config.ts';
import type { Store } from '../core/store/store.ts';

export interface DaemonContext {
  config: Config;
  store: Store;
  paths: ReturnType<typeof dataPaths>;
  jwtSecret: Uint8Array;
  log: FastifyBaseLogger;
  /** Background jobs (library scans) the daemon started; awaited on shutdown. */
  background: Set<Promise<unknown>>;
}

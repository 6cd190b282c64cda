// What every route handler can reach.
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../core/config.ts';
import type { dataPaths } from '../core/config.ts';
import type { HttpClient } from '../core/net/http-client.ts';
import type { Store } from '../core/store/store.ts';

export interface DaemonContext {
  config: Config;
  store: Store;
  paths: ReturnType<typeof dataPaths>;
  jwtSecret: Uint8Array;
  log: FastifyBaseLogger;
  /** The one client for outgoing requests (providers, cover URLs, the Kobo store). */
  http: HttpClient;
  /** Background jobs (library scans) the daemon started; awaited on shutdown. */
  background: Set<Promise<unknown>>;
}

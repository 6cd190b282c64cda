// One PostgreSQL connection of this process's own, outside the pool, on which it holds session advisory locks: the
// leases of the singleton jobs and the process's liveness mark. The server releases every lock of a session the moment
// its connection ends (a killed process), and TCP keep-alives both ways end the connection of a vanished machine within
// about 20 s. One session per database and token is shared by everything in the process that uses that token, so
// the daemon's leases and its liveness mark ride on a single connection.
import pg from 'pg';

const KEEPALIVE = 'SET tcp_keepalives_idle = 5; SET tcp_keepalives_interval = 5; SET tcp_keepalives_count = 3';

export class AdvisorySession {
  private readonly url: string;
  private readonly applicationName: string;
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client> | undefined;
  private readonly dropListeners = new Set<() => void>();
  private ended = false;
  /** Counts the connections lost so far: a lock taken under an older epoch is no longer held. */
  epoch = 0;

  /** `name` names the process to people looking at the server's sessions. */
  constructor(url: string, name: string) {
    this.url = url;
    this.applicationName = `bindery-session ${name}`.slice(0, 63);
  }

  get connected(): boolean {
    return this.client !== undefined;
  }

  /** Called whenever the connection, and with it every lock of the session, is lost. */
  onDrop(listener: () => void): () => void {
    this.dropListeners.add(listener);
    return () => this.dropListeners.delete(listener);
  }

  /** Runs one statement on the session's connection (connecting first if needed); any failure drops the connection. */
  async query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
    if (this.ended) throw new Error('the advisory-lock session is closed');
    const c = await this.connection();
    try {
      return (await c.query<R>(text, values)).rows;
    } catch (error) {
      this.drop(c);
      throw error;
    }
  }

  async end(): Promise<void> {
    this.ended = true;
    const c = this.client;
    this.client = undefined;
    this.connecting = undefined;
    await c?.end().catch(() => undefined);
  }

  private connection(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= (async () => {
      const next = new pg.Client({ connectionString: this.url, application_name: this.applicationName, keepAlive: true, keepAliveInitialDelayMillis: 5000, query_timeout: 10_000, connectionTimeoutMillis: 10_000 });
      next.on('error', () => this.drop(next));
      next.on('end', () => this.drop(next));
      try {
        await next.connect();
        await next.query(KEEPALIVE);
      } catch (error) {
        this.connecting = undefined;
        void next.end().catch(() => undefined);
        throw error;
      }
      if (this.ended) {
        void next.end().catch(() => undefined);
        throw new Error('the advisory-lock session is closed');
      }
      this.client = next;
      return next;
    })();
    return this.connecting;
  }

  private drop(dead: pg.Client): void {
    if (this.client !== dead) return;
    this.client = undefined;
    this.connecting = undefined;
    this.epoch++;
    void dead.end().catch(() => undefined);
    if (this.ended) return;
    for (const listener of [...this.dropListeners]) listener();
  }
}

interface SharedSession {
  session: AdvisorySession;
  users: number;
}

const shared = new Map<string, SharedSession>();

/**
 * The session of `token` on the database at `url`, shared with the rest of the process; `done` gives this use up and
 * ends the connection when nothing else uses it.
 */
export function useSession(url: string, token: string, name: string): { session: AdvisorySession; done(): Promise<void> } {
  const key = `${token}\n${url}`;
  let entry = shared.get(key);
  if (!entry) {
    entry = { session: new AdvisorySession(url, name), users: 0 };
    shared.set(key, entry);
  }
  entry.users++;
  const mine = entry;
  let given = false;
  return {
    session: mine.session,
    async done() {
      if (given) return;
      given = true;
      if (--mine.users > 0) return;
      if (shared.get(key) === mine) shared.delete(key);
      await mine.session.end();
    },
  };
}

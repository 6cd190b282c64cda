// A real `bindery serve` from the sources with a first administrator, and an API client signed in as it; and waiting
// for a condition with a deadline (what a watcher does takes a moment, never a fixed one).
import { fromSource, startDaemon, type DaemonProcess } from '../../bench/daemon-process.ts';

/** Resolves with the first truthy value `probe` gives, looking every 50 ms; fails after `timeoutMs`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface AdminDaemon {
  daemon: DaemonProcess;
  /** A JSON request as the administrator. */
  api(method: string, path: string, body?: unknown): Promise<Response>;
}

export async function startAdminDaemon(dataDir: string, env: Record<string, string> = {}): Promise<AdminDaemon> {
  const password = 'admin-password-1';
  const daemon = await startDaemon(fromSource, { dataDir, env: { BINDERY_ADMIN_USERNAME: 'admin', BINDERY_ADMIN_PASSWORD: password, BINDERY_LOG_LEVEL: 'info', ...env } });
  const login = await fetch(`${daemon.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password }) });
  const { accessToken } = (await login.json()) as { accessToken: string };
  return {
    daemon,
    api: (method, path, body) =>
      fetch(`${daemon.url}${path}`, { method, headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) }),
  };
}

// Several real `bindery serve` processes on one catalog (the same data directory; on the PostgreSQL run the same
// database, since every process maps the catalog path to it), for the replica, worker and load-balancer tests.
import { md5Hex } from '../../src/core/koreader/accounts.ts';
import { fromSource, startDaemon, type DaemonProcess, type StartOptions } from '../../bench/daemon-process.ts';

/** Leases looked at every 200 ms: takeovers in tests take a fraction of a second, not the default 2 s. */
export const FAST_LEASES = { BINDERY_LEASE_CHECK_MS: '200' };

export function startReplica(dataDir: string, name: string, options: Partial<StartOptions> = {}): Promise<DaemonProcess> {
  return startDaemon(fromSource, { dataDir, ...options, env: { BINDERY_INSTANCE_NAME: name, ...FAST_LEASES, ...options.env } });
}

export interface Health {
  instance: string;
  singletons: string[];
}

export async function health(baseUrl: string): Promise<Health> {
  const res = await fetch(`${baseUrl}/api/v1/healthcheck`);
  if (!res.ok) throw new Error(`healthcheck answered ${res.status}`);
  return ((await res.json()) as { data: Health }).data;
}

/** Waits until `test` passes on the healthcheck of `baseUrl`. */
export async function healthUntil(baseUrl: string, test: (h: Health) => boolean, timeoutMs = 30_000): Promise<Health> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const h = await health(baseUrl).catch(() => undefined);
    if (h && test(h)) return h;
    if (Date.now() > until) throw new Error(`healthcheck of ${baseUrl} never passed: ${JSON.stringify(h)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function call(baseUrl: string, method: string, path: string, token?: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown; headers: Headers }> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/** Creates the first administrator (through `baseUrl`) and signs in; returns the access token. */
export async function setupAdmin(baseUrl: string): Promise<string> {
  const setup = await call(baseUrl, 'POST', '/api/v1/setup', undefined, { username: 'admin', password: 'admin-password', name: 'Admin', email: 'a@example.com' });
  if (setup.status !== 200) throw new Error(`setup answered ${setup.status}: ${JSON.stringify(setup.body)}`);
  return signIn(baseUrl);
}

export async function signIn(baseUrl: string): Promise<string> {
  const login = await call(baseUrl, 'POST', '/api/v1/auth/login', undefined, { username: 'admin', password: 'admin-password' });
  if (login.status !== 200) throw new Error(`login answered ${login.status}: ${JSON.stringify(login.body)}`);
  return (login.body as { accessToken: string }).accessToken;
}

export interface KoreaderDevice {
  user: string;
  password: string;
}

/** Links a KOReader account to the signed-in user, with sync on. */
export async function linkKoreader(baseUrl: string, token: string, device: KoreaderDevice): Promise<void> {
  const linked = await call(baseUrl, 'PUT', '/api/v1/koreader-users/me', token, { username: device.user, password: device.password });
  if (linked.status !== 200) throw new Error(`linking KOReader answered ${linked.status}: ${JSON.stringify(linked.body)}`);
  const sync = await call(baseUrl, 'PATCH', '/api/v1/koreader-users/me/sync?enabled=true', token);
  if (sync.status !== 204) throw new Error(`turning KOReader sync on answered ${sync.status}`);
}

function koreaderHeaders(device: KoreaderDevice): Record<string, string> {
  return { 'x-auth-user': device.user, 'x-auth-key': md5Hex(device.password), accept: 'application/vnd.koreader.v1+json' };
}

export function pushProgress(baseUrl: string, device: KoreaderDevice, document: string, percentage: number): ReturnType<typeof call> {
  return call(baseUrl, 'PUT', '/api/koreader/syncs/progress', undefined, { document, progress: `/body/DocFragment[${Math.round(percentage * 100)}]`, percentage, device: 'kindle', device_id: 'K1' }, koreaderHeaders(device));
}

export function pullProgress(baseUrl: string, device: KoreaderDevice, document: string): ReturnType<typeof call> {
  return call(baseUrl, 'GET', `/api/koreader/syncs/progress/${document}`, undefined, undefined, koreaderHeaders(device));
}

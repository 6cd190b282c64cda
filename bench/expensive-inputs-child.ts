// One measurement in a fresh process, against the sources under <root>/src (this checkout's or an older one's), printed
// as JSON: CPU seconds (all threads), wall seconds, peak RSS and the outcome.
//   page-dimensions <root> <archive.cbz>
//   icons-batch <root> <count> <bytesPerIcon>
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { peakRssMb } from './daemon-process.ts';
// Types only: the modules themselves are loaded from <root>, which may be an older checkout.
import type * as TokensModule from '../src/core/auth/tokens.ts';
import type * as ConfigModule from '../src/core/config.ts';
import type * as StoreModule from '../src/core/store/store.ts';
import type * as UsersModule from '../src/core/users/users.ts';
import type * as AppModule from '../src/daemon/app.ts';

const [mode, root, ...rest] = process.argv.slice(2) as [string, string, ...string[]];
const load = async <T,>(rel: string): Promise<T> => (await import(pathToFileURL(join(root, rel)).href)) as T;
const rssMb = (): number => Math.round(process.memoryUsage().rss / 1048576);

const startCpu = process.cpuUsage();
const started = performance.now();
let outcome: string;
let rssBefore = rssMb();

if (mode === 'page-dimensions') {
  const { comicPageDimensions } = await load<{ comicPageDimensions(path: string): Promise<unknown[]> }>('src/core/readers/comic-reader.ts');
  try {
    outcome = `${(await comicPageDimensions(rest[0] as string)).length} pages`;
  } catch (error) {
    outcome = `error: ${(error as Error).message}`;
  }
} else {
  const [count, bytes] = rest.map(Number) as [number, number];
  const [{ loadConfig }, { openStore }, { buildApp }, { createUser }, { signToken, ACCESS_TOKEN_SECONDS }] = await Promise.all([
    load<typeof ConfigModule>('src/core/config.ts'),
    load<typeof StoreModule>('src/core/store/store.ts'),
    load<typeof AppModule>('src/daemon/app.ts'),
    load<typeof UsersModule>('src/core/users/users.ts'),
    load<typeof TokensModule>('src/core/auth/tokens.ts'),
  ]);
  const dataDir = mkdtempSync(join(tmpdir(), 'bindery-bench-icons-'));
  const config = { ...loadConfig({ env: {}, flags: { dataDir } }), logLevel: 'silent' as const };
  const store = await openStore(join(dataDir, 'bindery.sqlite'));
  const { app, ctx } = await buildApp({ config, store });
  await app.ready();
  const id = await createUser(store.db, { username: 'admin', password: 'admin-password', name: 'Admin', permissions: { admin: true }, libraryIds: [] });
  const token = await signToken(ctx.jwtSecret, { userId: id, username: 'admin', isDefaultPassword: false, sessionVersion: 0 }, 'access', ACCESS_TOKEN_SECONDS);
  const svg = `<svg xmlns="http://www.w3.org/2000/svg"><path d="${'M1 1 '.repeat(Math.max(1, Math.floor((bytes - 60) / 5)))}"/></svg>`;
  const payload = JSON.stringify({ icons: Array.from({ length: count }, (_, i) => ({ svgName: `icon-${i}`, svgData: svg })) });
  // The request as it arrives: the client's bytes, not an object this process built.
  global.gc?.();
  rssBefore = rssMb();
  const res = await app.inject({ method: 'POST', url: '/api/v1/icons/batch', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload });
  outcome = `${res.statusCode} ${res.statusCode === 200 ? `${(res.json() as { successCount: number }).successCount} saved` : (res.json() as { message: string }).message}`;
  await app.close();
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
}

const cpu = process.cpuUsage(startCpu);
process.stdout.write(
  `${JSON.stringify({
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    seconds: (performance.now() - started) / 1000,
    rssBeforeMb: rssBefore,
    // VmHWM, not getrusage's maxRSS, which a child inherits from the process that started it.
    peakRssMb: Math.round(peakRssMb(process.pid)),
    outcome,
  })}\n`,
);

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../src/core/store/store.ts';
import { createUser } from '../../src/core/users/users.ts';
import { fillCatalog } from '../book-catalog.ts';
import { principalFor } from '../../src/core/auth/principal.ts';
import { appFilterOptions } from '../../src/core/app/filter-options.ts';
const dir = mkdtempSync(join(tmpdir(), 'fo-'));
const store = await openStore(join(dir, 'b.sqlite'));
const adminId = await createUser(store.db, { username: 'admin', password: 'admin-password', name: 'A', permissions: { admin: true } });
fillCatalog(store.sqlite, 100000, join(dir, 'lib'), adminId);
store.sqlite.pragma('optimize');
const p = (await principalFor(store, adminId))!;
for (let i = 0; i < 2; i++) {
  store.sqlite.prepare("INSERT INTO app_settings (name, val) VALUES ('x', ?) ON CONFLICT(name) DO UPDATE SET val = excluded.val").run(String(i));
  const t = performance.now(); const c = process.cpuUsage();
  appFilterOptions(store, p, {});
  const u = process.cpuUsage(c);
  console.log('total', (performance.now() - t).toFixed(0), 'cpu', ((u.user + u.system) / 1000).toFixed(0));
}
// per-branch timing
const orig = store.sqlite.prepare.bind(store.sqlite);
(globalThis as any).__dir = dir;
await store.close();

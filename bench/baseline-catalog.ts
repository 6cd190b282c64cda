// node bench/baseline-catalog.ts <tree> <dir> <books> <settings,...> <kobo books>
// Writes the feeds benchmark's catalog with the code of another tree (bench/baseline-tree.ts): a catalog migrated by
// newer code is refused by older code, while newer code migrates an older catalog forward when it starts. Prints the
// reader's id and Kobo token as JSON.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

interface Written {
  store: { db: unknown; close(): Promise<void> };
  readerId: number;
}
interface Setup {
  writeBenchCatalog(dir: string, books: number, settings: string[], options: { kobo: number }): Promise<Written>;
}
interface KoboSettings {
  koboSettingsFor(db: unknown, userId: number): Promise<{ token: string }>;
}

const [tree = '', dir = '', books = '0', settings = '', kobo = '0'] = process.argv.slice(2);
const from = async <T>(path: string): Promise<T> => (await import(pathToFileURL(join(tree, path)).href)) as T;
const { writeBenchCatalog } = await from<Setup>('bench/inject-bench-setup.ts');
const { koboSettingsFor } = await from<KoboSettings>('src/core/kobo/sync-settings.ts');
const written = await writeBenchCatalog(dir, Number(books), settings.split(','), { kobo: Number(kobo) });
const { token } = await koboSettingsFor(written.store.db, written.readerId);
await written.store.close();
console.log(JSON.stringify({ readerId: written.readerId, koboToken: token }));

// Backup and restore of a large catalog with covers: `npm run bench:backup -- [--books 100000] [--large-covers 1000]`.
// The catalog comes from bench/book-catalog.ts; every book gets a 250×375 thumbnail-sized JPEG cover (15–25 KB,
// 500 distinct images cycled, far enough apart that gzip cannot see the repeats), and a sample of books also gets a
// realistic full-size cover (600–1,200 px tall, 100–300 KB). Each operation runs in its own process; prints wall
// time, process CPU time, peak RSS and sizes, with the load average.
import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openStore } from '../src/core/store/store.ts';
import { fillCatalog } from './book-catalog.ts';

const { values } = parseArgs({ options: { books: { type: 'string', default: '100000' }, 'large-covers': { type: 'string', default: '1000' }, dir: { type: 'string' } } });
const books = Number(values.books);
const largeCovers = Number(values['large-covers']);
const root = values.dir ?? join(import.meta.dirname, '.corpus', `backup-${books}`);
const dataDir = join(root, 'data');
const marker = join(root, 'ready');

async function noiseJpeg(width: number, height: number, seed: number, quality: number, amplitude: number): Promise<Buffer> {
  const { default: sharp } = await import('sharp');
  // A smooth gradient with a little noise: compresses like a real cover, not like pure noise.
  const pixels = Buffer.alloc(width * height * 3);
  let x = seed * 2654435761;
  for (let i = 0; i < pixels.length; i += 3) {
    x = (x * 1103515245 + 12345) >>> 0;
    const p = i / 3;
    const row = Math.floor(p / width);
    const noise = x % amplitude;
    pixels[i] = (row * 255) / height + noise;
    pixels[i + 1] = ((p % width) * 255) / width + noise;
    pixels[i + 2] = (seed * 37 + noise) % 256;
  }
  return sharp(pixels, { raw: { width, height, channels: 3 } }).jpeg({ quality }).toBuffer();
}

async function buildData(): Promise<void> {
  rmSync(root, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  const store = await openStore(join(dataDir, 'bindery.sqlite'));
  const userId = Number(store.sqlite.prepare("INSERT INTO users (username, password_hash, name) VALUES ('bench', 'x', 'Bench')").run().lastInsertRowid);
  const { bookIds } = await fillCatalog(store, books, join(root, 'books'), userId);
  await store.close();
  const thumbs: string[] = [];
  const large: string[] = [];
  mkdirSync(join(root, 'images'), { recursive: true });
  for (let i = 0; i < 500; i++) {
    const path = join(root, 'images', `thumb-${i}.jpg`);
    writeFileSync(path, await noiseJpeg(250, 375, i, 75, 24));
    thumbs.push(path);
  }
  for (let i = 0; i < Math.min(largeCovers, 100); i++) {
    const height = 600 + ((i * 61) % 601);
    const path = join(root, 'images', `cover-${i}.jpg`);
    writeFileSync(path, await noiseJpeg(Math.round(height / 1.5), height, 1000 + i, 85, 24));
    large.push(path);
  }
  for (let id = bookIds.first, n = 0; id <= bookIds.last; id++, n++) {
    const dir = join(dataDir, 'covers', String(id));
    mkdirSync(dir, { recursive: true });
    copyFileSync(thumbs[n % thumbs.length] as string, join(dir, 'thumbnail.jpg'));
    if (n < largeCovers) copyFileSync(large[n % large.length] as string, join(dir, 'cover.jpg'));
  }
  writeFileSync(marker, new Date().toISOString());
}

function du(path: string): number {
  return Number(execFileSync('du', ['-sb', path], { encoding: 'utf8' }).split('\t')[0]);
}

function run(op: string, dir: string, archive: string): Record<string, number> {
  const out = execFileSync(process.execPath, [join(import.meta.dirname, 'backup-child.ts'), op, dir, archive], { encoding: 'utf8', maxBuffer: 1 << 20 });
  return JSON.parse(out.trim().split('\n').at(-1) as string) as Record<string, number>;
}

if (!existsSync(marker)) {
  const t = performance.now();
  process.stderr.write(`building ${books} books with covers in ${root} ...\n`);
  await buildData();
  process.stderr.write(`built in ${((performance.now() - t) / 1000).toFixed(0)} s\n`);
}
const catalogBytes = statSync(join(dataDir, 'bindery.sqlite')).size;
const sizes = (prefix: string): string => {
  const files = readdirSync(join(root, 'images')).filter((n) => n.startsWith(prefix)).map((n) => statSync(join(root, 'images', n)).size);
  return `${Math.round(Math.min(...files) / 1024)}–${Math.round(Math.max(...files) / 1024)} KB`;
};
const coverBytes = du(join(dataDir, 'covers'));
const archive = join(root, 'out', 'backup.tar.gz');
const exportArchive = join(root, 'out', 'export.tar.gz');
rmSync(join(root, 'out'), { recursive: true, force: true });
const restoreDir = join(root, 'restored');
rmSync(restoreDir, { recursive: true, force: true });

const rows = [run('backup', dataDir, archive), run('verify', dataDir, archive), run('restore', restoreDir, archive), run('export', dataDir, exportArchive)];
const db = new Database(join(restoreDir, 'bindery.sqlite'), { readonly: true });
const restoredBooks = db.prepare('SELECT count(*) FROM book').pluck().get();
db.close();

const mb = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);
console.log(`\n${books} books (restored: ${restoredBooks}); catalog ${mb(catalogBytes)} MB; covers ${mb(coverBytes)} MB (${books} thumbnails of ${sizes('thumb-')}, ${largeCovers} full-size covers of ${sizes('cover-')})\n`);
console.log('| operation | wall s | CPU s | peak RSS MB | output MB | load avg at start |');
console.log('|---|---|---|---|---|---|');
for (const r of rows) {
  const output = r.archiveBytes !== undefined ? mb(r.archiveBytes) : '';
  console.log(`| ${r.op} | ${((r.wallMs as number) / 1000).toFixed(1)} | ${((r.cpuMs as number) / 1000).toFixed(1)} | ${r.maxRssMb} | ${output} | ${(r.load as number).toFixed(1)} |`);
}
console.log(`\nload average now: ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);

// bindery backup / backup verify / restore, run as a script or cron job runs them: a backup taken while another
// process keeps writing is consistent and restores table for table; damaged archives are refused and change nothing;
// a backup killed half-way leaves no file under the final name; restore refuses while a daemon runs.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expiredBackups } from '../../src/core/backup/retention.ts';
import { openStore } from '../../src/core/store/store.ts';
import { catalogRows } from '../helpers/catalog-rows.ts';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';
import { BIN, runCli } from '../helpers/cli.ts';
import { onPostgres } from '../helpers/engine.ts';
import { freePort } from '../helpers/free-port.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';

let tmp: TempDir;
let dataDir: string;
let userId: number;
let bookId: number;

const catalogOf = (dir: string): string => join(dir, 'bindery.sqlite');
const bindery = (dir: string, ...args: string[]) => runCli(['--data-dir', dir, ...args]);

/** Every file below a folder with its SHA-256: the state "nothing changed" is checked against. */
function treeDigest(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else out[relative(dir, path)] = createHash('sha256').update(readFileSync(path)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

function startWriter(): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(import.meta.dirname, '..', 'helpers', 'progress-writer.ts'), catalogOf(dataDir), String(userId), String(bookId)], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.stdout?.once('data', () => resolve(child));
    child.once('error', reject);
  });
}

async function stopWriter(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

async function sessionCount(): Promise<number> {
  const store = await openStore(catalogOf(dataDir));
  try {
    return Number((await store.exec.get('SELECT count(*) AS n FROM reading_sessions'))?.n);
  } finally {
    await store.close();
  }
}

beforeAll(async () => {
  tmp = makeTempDir('bindery-backup-');
  dataDir = tmp.file('data');
  const store = await openStore(catalogOf(dataDir));
  const libraryId = await seedLibrary(store.db, tmp.file('books'), 'Books');
  userId = (await store.db.insertInto('users').values({ username: 'reader', password_hash: 'x', name: 'Reader' }).returning('id').executeTakeFirstOrThrow()).id;
  for (let i = 0; i < 40; i++) {
    const { bookId: id } = await seedBook(store.db, libraryId, { title: `Book ${i}`, authors: [`Author ${i % 7}`] });
    bookId ??= id;
    mkdirSync(join(dataDir, 'covers', String(id)), { recursive: true });
    writeFileSync(join(dataDir, 'covers', String(id), 'cover.jpg'), Buffer.alloc(3000 + i, i));
    writeFileSync(join(dataDir, 'covers', String(id), 'thumbnail.jpg'), Buffer.alloc(500 + i, i));
  }
  await store.db.insertInto('user_book_progress').values({ user_id: userId, book_id: bookId, epub_progress_percent: 0 }).execute();
  await store.db.insertInto('annotations').values({ user_id: userId, book_id: bookId, cfi: 'epubcfi(/6/2)', text: 'a highlight', note: 'why it matters' }).execute();
  await store.close();
  mkdirSync(join(dataDir, 'icons', 'svg'), { recursive: true });
  writeFileSync(join(dataDir, 'icons', 'svg', 'star.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  mkdirSync(join(dataDir, 'custom-fonts', String(userId)), { recursive: true });
  writeFileSync(join(dataDir, 'custom-fonts', String(userId), 'font-1.ttf'), Buffer.alloc(2048, 3));
});
afterAll(() => tmp.remove());

describe('bindery backup while another process writes, then restore', () => {
  let archive: string;

  it('takes a consistent snapshot while progress is being written', async () => {
    const writer = await startWriter();
    try {
      await new Promise((r) => setTimeout(r, 200));
      const before = await sessionCount();
      const res = await bindery(dataDir, '--json', 'backup', '--to', tmp.file('backups/'));
      expect(res.code, res.stdout + res.stderr).toBe(0);
      const result = JSON.parse(res.stdout) as { path: string; tables: Record<string, number>; sections: Record<string, { files: number }> };
      archive = result.path;
      expect(archive).toMatch(/backups\/bindery-backup-\d{8}-\d{6}\.tar$/);
      expect(result.tables.book).toBe(40);
      expect(result.sections.covers?.files).toBe(80);
      expect(result.sections.icons?.files).toBe(1);
      expect(result.sections['custom-fonts']?.files).toBe(1);
      // The writer kept going during the backup: the snapshot is a moment of a catalog in motion.
      expect(result.tables.reading_sessions).toBeGreaterThanOrEqual(before);
      expect(await sessionCount()).toBeGreaterThan(before);
    } finally {
      await stopWriter(writer);
    }
  });

  it('verifies the archive', async () => {
    const res = await bindery(dataDir, '--json', 'backup', 'verify', archive);
    expect(res.code, res.stdout).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ ok: true, formatVersion: 1, tables: { book: 40 } });
    expect((await bindery(dataDir, 'backup', 'verify', archive)).stdout).toMatch(/OK — format 1/);
  });

  it('restores into another data directory: every table as it was at the snapshot, and the files', async () => {
    const target = tmp.file('restored');
    const res = await bindery(target, '--json', 'restore', '--yes', archive);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ files: { covers: 80, icons: 1, 'custom-fonts': 1 }, previousDir: null });

    const source = await catalogRows(catalogOf(dataDir));
    const restored = await catalogRows(catalogOf(target));
    expect(Object.keys(restored)).toEqual(Object.keys(source));
    const sessions = restored.reading_sessions as { id: number; duration_seconds: number }[];
    const progress = restored.user_book_progress as { epub_progress_percent: number }[];
    // Consistency: the progress row and the sessions come from the same transaction boundary.
    expect(progress[0]?.epub_progress_percent).toBe(sessions.at(-1)?.duration_seconds ?? 0);
    for (const [table, rows] of Object.entries(source)) {
      if (table === 'reading_sessions') expect(sessions).toEqual(rows.slice(0, sessions.length));
      else if (table === 'user_book_progress') expect(progress.length).toBe(rows.length);
      else expect(restored[table], table).toEqual(rows);
    }
    const files = (dir: string) => Object.fromEntries(Object.entries(treeDigest(dir)).filter(([p]) => /^(covers|icons|custom-fonts)\//.test(p)));
    expect(files(target)).toEqual(files(dataDir));
  });

  it('restores over an existing data directory, keeping the previous catalog and folders aside', async () => {
    const target = tmp.file('restored');
    writeFileSync(join(target, 'covers', String(bookId), 'cover.jpg'), 'changed since');
    const res = await bindery(target, 'restore', '--yes', archive);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/previous catalog and folders are in .*pre-restore-/);
    const aside = readdirSync(target).find((n) => n.startsWith('pre-restore-')) as string;
    expect(readFileSync(join(target, aside, 'covers', String(bookId), 'cover.jpg'), 'utf8')).toBe('changed since');
    expect(existsSync(join(target, aside, 'bindery.sqlite'))).toBe(true);
    expect(readFileSync(join(target, 'covers', String(bookId), 'cover.jpg'))).toEqual(readFileSync(join(dataDir, 'covers', String(bookId), 'cover.jpg')));
  });

  it('asks for --yes when nobody is at a terminal', async () => {
    const res = await bindery(tmp.file('restored'), '--json', 'restore', archive);
    expect(res.code).toBe(2);
    expect(JSON.parse(res.stdout).error.code).toBe('CONFIRMATION_REQUIRED');
  });

  describe('a damaged archive is refused and changes nothing', () => {
    const refusedWithoutChange = async (bad: string, message: RegExp): Promise<void> => {
      const target = tmp.file('restored');
      const before = treeDigest(target);
      const verify = await bindery(target, 'backup', 'verify', bad);
      expect(verify.code).toBe(7);
      expect(verify.stderr).toMatch(message);
      const res = await bindery(target, '--json', 'restore', '--yes', bad);
      expect(res.code).toBe(7);
      expect(JSON.parse(res.stdout).error.message).toMatch(message);
      expect(treeDigest(target)).toEqual(before);
    };

    it('cut short', async () => {
      const bytes = readFileSync(archive);
      const cut = tmp.file('cut.tar');
      writeFileSync(cut, bytes.subarray(0, Math.floor(bytes.length * 0.6)));
      await refusedWithoutChange(cut, /cut short/);
      const tail = tmp.file('tail.tar');
      writeFileSync(tail, bytes.subarray(0, bytes.length - 4));
      await refusedWithoutChange(tail, /cut short/);
      // Compressed after the fact and then cut: refused as well.
      const gz = gzipSync(bytes);
      const gzCut = tmp.file('cut-after.tar.gz');
      writeFileSync(gzCut, gz.subarray(0, gz.length - 4));
      await refusedWithoutChange(gzCut, /damaged or cut short/);
    });

    it('a member altered inside', async () => {
      const tar = readFileSync(archive);
      const at = tar.indexOf(Buffer.from('<svg xmlns'));
      expect(at).toBeGreaterThan(0);
      tar.write('<SVG', at);
      const tampered = tmp.file('tampered.tar');
      writeFileSync(tampered, tar);
      await refusedWithoutChange(tampered, /icons\/svg\/star\.svg does not match its checksum/);
      const catalog = readFileSync(archive);
      const inCatalog = catalog.indexOf(Buffer.from('catalog/bindery.sqlite.gz\0')) + 512 + 700;
      catalog[inCatalog] = (catalog[inCatalog] as number) ^ 0xff;
      writeFileSync(tampered, catalog);
      await refusedWithoutChange(tampered, /catalog\/bindery\.sqlite\.gz does not match its checksum/);
    });

    it('a member removed', async () => {
      // Drop the icon member (its pax header, header and one data block) and keep everything else.
      const tar = readFileSync(archive);
      const name = tar.indexOf(Buffer.from('icons/svg/star.svg\0'));
      const header = name - (name % 512);
      const paxHeader = header - 1024;
      const spliced = Buffer.concat([tar.subarray(0, paxHeader), tar.subarray(header + 1024)]);
      const removed = tmp.file('removed.tar');
      writeFileSync(removed, spliced);
      await refusedWithoutChange(removed, /members\.jsonl does not list the members/);
    });

    it('not a backup at all', async () => {
      const other = tmp.file('other.tar.gz');
      writeFileSync(other, gzipSync(Buffer.from('hello')));
      await refusedWithoutChange(other, /cut short|damaged/);
    });
  });
});

describe('a backup killed half-way', () => {
  it('leaves no file under the final name, and the next backup clears the remains', async () => {
    const big = tmp.file('big');
    const store = await openStore(catalogOf(big));
    await store.close();
    // Enough incompressible cover bytes that the backup is still writing when it is killed.
    for (let i = 0; i < 300; i++) {
      mkdirSync(join(big, 'covers', String(i)), { recursive: true });
      writeFileSync(join(big, 'covers', String(i), 'cover.jpg'), createHash('sha512').update(String(i)).digest().toString('hex').repeat(3000));
    }
    const out = tmp.file('killed');
    const finalPath = join(out, 'final.tar');
    const child = spawn(BIN, ['--data-dir', big, 'backup', '--to', finalPath], { env: { ...process.env, BINDERY_CONFIG: '' }, stdio: 'ignore' });
    const partials = (): string[] => (existsSync(out) ? readdirSync(out).filter((n) => n.endsWith('.partial')) : []);
    for (let i = 0; i < 400 && !partials().some((n) => statSync(join(out, n)).size > 0); i++) await new Promise((r) => setTimeout(r, 10));
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    expect(partials().length).toBe(1);
    expect(existsSync(finalPath)).toBe(false);

    const again = await bindery(big, 'backup', '--to', finalPath);
    expect(again.code, again.stderr).toBe(0);
    expect(readdirSync(out)).toEqual(['final.tar']);
  });
});

describe('restore beside a running daemon', () => {
  it('is refused, and the catalog stays as it is', async () => {
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const address = server.address();
        server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
      });
    });
    const target = tmp.file('served');
    await (await openStore(catalogOf(target))).close();
    const made = await bindery(target, '--json', 'backup', '--to', tmp.file('served-backups/'));
    const archive = (JSON.parse(made.stdout) as { path: string }).path;
    const before = treeDigest(target);
    const child = spawn(BIN, ['--data-dir', target, 'serve', '--port', String(port), '--host', '127.0.0.1'], { env: { ...process.env, BINDERY_CONFIG: '', BINDERY_LOG_LEVEL: 'silent' }, stdio: 'ignore' });
    try {
      for (let i = 0; i < 200 && !existsSync(join(target, 'bindery-serve.pid')); i++) await new Promise((r) => setTimeout(r, 50));
      const res = await bindery(target, '--json', 'restore', '--yes', archive);
      expect(res.code).toBe(4);
      expect(JSON.parse(res.stdout).error).toMatchObject({ code: 'BACKUP_DAEMON_RUNNING', message: expect.stringMatching(/bindery serve \(pid \d+, started [^)]+\) is using .*; stop it first/) });
      expect(readdirSync(target).filter((n) => n.startsWith('.restore-') || n.startsWith('pre-restore-'))).toEqual([]);
      expect(treeDigest(target)['bindery.sqlite']).toBe(before['bindery.sqlite']);
    } finally {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    // Stopped: the mark is gone.
    expect(existsSync(join(target, 'bindery-serve.pid'))).toBe(false);
  });
});

// A SQLite catalog never spans machines; a catalog on a database server may be used by replicas anywhere.
describe.runIf(onPostgres)('restore beside a replica on another machine', () => {
  it('is refused while any replica holds the catalog\'s leases, whatever the shared pid file says', async () => {
    const target = tmp.file('replicated');
    await (await openStore(catalogOf(target))).close();
    const made = await bindery(target, '--json', 'backup', '--to', tmp.file('replicated-backups/'));
    const archive = (JSON.parse(made.stdout) as { path: string }).path;
    const child = spawn(BIN, ['--data-dir', target, 'serve', '--port', String(await freePort()), '--host', '127.0.0.1'], { env: { ...process.env, BINDERY_CONFIG: '', BINDERY_LOG_LEVEL: 'silent' }, stdio: 'ignore' });
    try {
      const store = await openStore(catalogOf(target));
      try {
        for (let i = 0; i < 400 && (await store.db.selectFrom('lease').select('name').execute()).length === 0; i++) await new Promise((r) => setTimeout(r, 50));
        expect((await store.db.selectFrom('lease').select('name').execute()).length).toBeGreaterThan(0);
        const books = await store.db.selectFrom('book').select('id').execute();
        // The data directory is shared: another replica, started later on another machine, wrote the pid file last.
        writeFileSync(join(target, 'bindery-serve.pid'), `${JSON.stringify({ host: 'replica-b.example', boot: 'boot-of-replica-b', pid: 4_000_000, startedAt: new Date().toISOString(), port: 6060 })}\n`);
        const res = await bindery(target, '--json', 'restore', '--yes', archive);
        expect(res.code, res.stderr).toBe(4);
        expect(JSON.parse(res.stdout).error).toMatchObject({ code: 'BACKUP_DAEMON_RUNNING', message: expect.stringMatching(/bindery serve \(.+, running [a-z-]+ since [^)]+\) is using the catalog database; stop every replica first/) });
        expect(readdirSync(target).filter((n) => n.startsWith('.restore-') || n.startsWith('pre-restore-'))).toEqual([]);
        expect(await store.db.selectFrom('book').select('id').execute()).toEqual(books);
      } finally {
        await store.close();
      }
    } finally {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
  });
});

describe('retention of scheduled backups', () => {
  it('keeps the newest of each recent day and week, never a backup made by hand', () => {
    const names = [
      'bindery-backup-auto-20261127-030000.tar',
      'bindery-backup-auto-20261126-030000.tar',
      'bindery-backup-auto-20261126-150000.tar',
      'bindery-backup-auto-20261125-030000.tar',
      'bindery-backup-auto-20261118-030000.tar',
      'bindery-backup-auto-20261110-030000.tar',
      'bindery-backup-auto-20261001-030000.tar',
      'bindery-backup-20261001-030000.tar',
      'notes.txt',
    ];
    expect(expiredBackups(names, { keepDaily: 2, keepWeekly: 2 }).sort()).toEqual([
      'bindery-backup-auto-20261001-030000.tar',
      'bindery-backup-auto-20261110-030000.tar',
      'bindery-backup-auto-20261125-030000.tar',
      'bindery-backup-auto-20261126-030000.tar',
    ]);
    expect(expiredBackups(names, { keepDaily: 0, keepWeekly: 0 })).not.toContain('bindery-backup-auto-20261127-030000.tar');
  });
});

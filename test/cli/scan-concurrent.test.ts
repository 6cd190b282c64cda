// Two `bindery scan` runs of one library at the same time (cron and a replica, two replicas): each file becomes one book,
// whichever process gets to it first, and neither run fails. On PostgreSQL nothing but the catalog keeps them apart.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/store/store.ts';
import { runCli, type CliResult } from '../helpers/cli.ts';
import { writeSimpleEpub } from '../helpers/library-fixtures.ts';

let dir: string;
const bindery = (...args: string[]): Promise<CliResult> => runCli(['--data-dir', join(dir, 'data'), ...args], { env: { HOME: dir } });

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'bindery-scan-concurrent-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

// More files than one write batch of a scan, in two folders (a folder groups nothing in this mode, but both runs walk both).
const FILES = 150;

describe('two scans of the same library at once', () => {
  it('add every file exactly once between them, and both succeed', { timeout: 240_000 }, async () => {
    const books = join(dir, 'books');
    for (let i = 0; i < FILES; i++) await writeSimpleEpub(join(books, i % 2 === 0 ? 'even' : 'odd', `Book ${i}.epub`), { title: `Book ${i}`, authors: [`Author ${i % 7}`] });
    expect((await bindery('library', 'add', 'Books', books)).code).toBe(0);

    const runs = await Promise.all([bindery('--json', 'scan', 'Books'), bindery('--json', 'scan', 'Books')]);
    for (const run of runs) expect(run.code, run.stderr + run.stdout).toBe(0);
    const summaries = runs.map((run) => JSON.parse(run.stdout) as { added: number; failed: unknown[] });
    expect(summaries.map((s) => s.failed)).toEqual([[], []]);
    expect(summaries[0]!.added + summaries[1]!.added).toBe(FILES);

    const store = await openStore(join(dir, 'data', 'bindery.sqlite'));
    try {
      const count = async (table: 'book' | 'book_file'): Promise<number> => Number((await store.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      expect(await count('book')).toBe(FILES);
      expect(await count('book_file')).toBe(FILES);
    } finally {
      await store.close();
    }
  });
});

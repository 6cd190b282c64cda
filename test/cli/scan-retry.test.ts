// A file that could not be read (EACCES) is read again by the next incremental scan once it is readable: fixing a
// permission does not change a file's size or modification time, so "unchanged since it failed" must not apply.
// Root reads everything, so as root the scans run as `nobody`.
import { chmodSync, chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeSimpleEpub } from '../helpers/library-fixtures.ts';
import { runCli, type CliResult } from '../helpers/cli.ts';

const asRoot = process.getuid?.() === 0;
const NOBODY = 65534;
let dir: string;

const bindery = (...args: string[]): Promise<CliResult> =>
  runCli(['--data-dir', join(dir, 'data'), ...args], { env: { HOME: dir }, ...(asRoot ? { as: { uid: NOBODY, gid: NOBODY } } : {}) });

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'bindery-scan-retry-'));
  chmodSync(dir, 0o755);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('an unreadable file', () => {
  it('is tried again by the next incremental scan once it can be read', async () => {
    const books = join(dir, 'books');
    await writeSimpleEpub(join(books, 'Open.epub'), { title: 'Open', authors: ['A'] });
    const locked = await writeSimpleEpub(join(books, 'Locked.epub'), { title: 'Locked', authors: ['B'] });
    if (asRoot) for (const p of [dir, books, join(books, 'Open.epub'), locked]) chownSync(p, NOBODY, NOBODY);
    chmodSync(locked, 0o000);

    expect((await bindery('library', 'add', 'Books', books)).code).toBe(0);
    const first = await bindery('--json', 'scan', 'Books');
    expect(first.code).toBe(5);
    expect(JSON.parse(first.stdout)).toMatchObject({ added: 1, failed: [{ path: locked, code: 'IO', reason: expect.stringContaining('EACCES') }] });

    chmodSync(locked, 0o644);
    const second = await bindery('--json', 'scan', 'Books');
    expect(second.code, second.stdout).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ added: 1, failed: [] });
  });
});

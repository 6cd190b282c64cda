// `bindery bookdrop` over the real command line (no terminal: it refuses to act without --yes), and the terminal
// review: its state machine, and the ink view driven through fake terminal streams.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { initialReview, reviewReducer, reviewResult, runReview, type KeyPress, type ReviewItem, type ReviewState } from '../../src/commands/bookdrop-review.ts';
import { cliFor, runCli } from '../helpers/cli.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

let lib: TempLibrary;
const bindery = cliFor(() => lib.dataDir);
const bookdrop = (...parts: string[]): string => join(lib.dataDir, 'bookdrop', ...parts);

/** The CLI leaves files changed in the last two seconds for later (they may still be being written). */
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 2_100));

beforeEach(() => {
  lib = makeTempLibrary();
});
afterEach(() => lib.cleanup());

describe('bindery bookdrop', () => {
  beforeEach(async () => {
    await writeSimpleEpub(bookdrop('dune.epub'), { title: 'Dune', authors: ['Frank Herbert'] });
    await writeSimpleEpub(bookdrop('emma.epub'), { title: 'Emma', authors: ['Jane Austen'] });
    expect((await bindery('library', 'add', 'Books', lib.root)).code).toBe(0);
    await settle();
  });

  it('lists the files waiting for review', async () => {
    const res = await bindery('--json', 'bookdrop', 'list');
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout) as { bookdropDir: string; files: { fileName: string; originalMetadata: { title: string } }[]; added: number };
    expect(out.bookdropDir).toBe(bookdrop());
    expect(out.added).toBe(2);
    expect(out.files.map((f) => [f.fileName, f.originalMetadata.title]).sort()).toEqual([['dune.epub', 'Dune'], ['emma.epub', 'Emma']]);
    const text = await bindery('bookdrop', 'list');
    expect(text.stdout).toMatch(/^\d+\tdune\.epub\t\d+ KB\tDune — Frank Herbert$/m);
  });

  it('refuses to import without --yes when not on a terminal, and imports with it', async () => {
    const refused = await bindery('bookdrop', 'import');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe('bindery: 2 files would be imported into "Books"; add --yes to import without reviewing (or run on a terminal to review each)\n');
    expect(existsSync(bookdrop('dune.epub'))).toBe(true);

    const done = await bindery('bookdrop', 'import', '--yes');
    expect(done.code).toBe(0);
    expect(done.stdout).toContain('2 imported, 0 failed');
    expect(done.stdout).toMatch(/imported \d+ → Frank Herbert\/Dune\/Dune - Frank Herbert\.epub/);
    expect(existsSync(join(lib.root, 'Jane Austen', 'Emma', 'Emma - Jane Austen.epub'))).toBe(true);
    expect(readdirSync(bookdrop())).toEqual([]);
    const books = JSON.parse((await bindery('--json', 'books', 'list')).stdout) as { title: string }[] | { books: { title: string }[] };
    expect(JSON.stringify(books)).toContain('Dune');
    expect((await bindery('bookdrop', 'import', '--yes')).stdout).toContain('nothing waiting for review');
  });

  it('imports only the ids given, into the library and folder named, and reports a file that fails (exit 5)', async () => {
    mkdirSync(lib.path('..', 'second'));
    expect((await bindery('library', 'add', 'Second', lib.path('..', 'second'))).code).toBe(0);
    writeFileSync(bookdrop('broken.epub'), 'not a zip at all');
    await settle();
    const ambiguous = await bindery('bookdrop', 'import', '--yes');
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain('--library');
    const list = JSON.parse((await bindery('--json', 'bookdrop', 'list')).stdout) as { files: { id: number; fileName: string }[] };
    const idOf = (name: string): string => String(list.files.find((f) => f.fileName === name)!.id);
    const res = await bindery('--json', 'bookdrop', 'import', idOf('broken.epub'), idOf('emma.epub'), '--library', 'Second', '--path', lib.path('..', 'second'), '--yes');
    expect(res.code).toBe(5);
    const outcome = JSON.parse(res.stdout) as { successfullyImported: number; failed: number; results: { fileName: string; success: boolean; message: string }[] };
    expect(outcome).toMatchObject({ successfullyImported: 1, failed: 1 });
    expect(outcome.results.find((r) => !r.success)).toMatchObject({ fileName: 'broken.epub', message: expect.stringMatching(/^reading the file failed/) });
    expect(existsSync(bookdrop('broken.epub'))).toBe(true);
    expect(existsSync(bookdrop('dune.epub'))).toBe(true);
    expect(existsSync(join(lib.path('..', 'second'), 'Jane Austen', 'Emma', 'Emma - Jane Austen.epub'))).toBe(true);
  });

  it('discards only with ids or --all, and only with --yes when not on a terminal', async () => {
    expect((await bindery('bookdrop', 'discard')).code).toBe(2);
    const list = JSON.parse((await bindery('--json', 'bookdrop', 'list')).stdout) as { files: { id: number; fileName: string }[] };
    const dune = String(list.files.find((f) => f.fileName === 'dune.epub')!.id);
    const refused = await bindery('bookdrop', 'discard', dune);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('add --yes');
    expect(existsSync(bookdrop('dune.epub'))).toBe(true);
    const done = await bindery('bookdrop', 'discard', dune, '--yes');
    expect(done.code).toBe(0);
    expect(existsSync(bookdrop('dune.epub'))).toBe(false);
    expect(existsSync(bookdrop('emma.epub'))).toBe(true);
    expect((await bindery('--json', 'bookdrop', 'discard', '--all', '--yes')).code).toBe(0);
    expect(readdirSync(bookdrop())).toEqual([]);
  });

  it('on a terminal, reviews each file: an edited title names the file, a skipped file stays', async ({ skip }) => {
    // A real pseudo-terminal from util-linux `script`; the keys are sent as the screens appear.
    const { spawnSync, spawn } = await import('node:child_process');
    if (spawnSync('script', ['--version']).status !== 0) skip('script(1) is not installed');
    const { BIN } = await import('../helpers/cli.ts');
    const child = spawn('script', ['-qfec', `${BIN} --data-dir ${lib.dataDir} bookdrop import`, '/dev/null'], { env: { ...process.env, BINDERY_CONFIG: '' } });
    let screen = '';
    child.stdout.on('data', (c: Buffer) => (screen += c.toString()));
    const exited = new Promise<number | null>((done) => child.on('close', done));
    const seen = async (text: string): Promise<void> => {
      for (let i = 0; i < 600 && !screen.includes(text); i++) await new Promise((r) => setTimeout(r, 50));
      expect(screen, `waiting for ${text}`).toContain(text);
    };
    const keys = async (text: string): Promise<void> => {
      child.stdin.write(text);
      await new Promise((r) => setTimeout(r, 150));
    };
    await seen('Bookdrop 1/2');
    const first = screen.includes('dune.epub') ? 'dune' : 'emma';
    await keys('e');
    await seen('Esc cancel');
    await keys('\x7f'.repeat(10) + 'Edited');
    await keys('\r');
    await seen('Edited - ');
    await keys('a');
    await seen('Bookdrop 2/2');
    await keys('s');
    await seen('1 of 2 accepted');
    await keys('y');
    await seen('1 imported, 0 failed');
    child.stdin.end();
    expect(await exited).toBe(0);
    const imported = readdirSync(lib.root, { recursive: true }).map(String);
    expect(imported.some((p) => p.endsWith('Edited - Frank Herbert.epub') || p.endsWith('Edited - Jane Austen.epub'))).toBe(true);
    expect(readdirSync(bookdrop())).toEqual([first === 'dune' ? 'emma.epub' : 'dune.epub']);
  }, 60_000);

  it('uses the folder given by --bookdrop-dir or BINDERY_BOOKDROP_DIR', async () => {
    const elsewhere = lib.path('..', 'drop-here');
    await writeSimpleEpub(join(elsewhere, 'persuasion.epub'), { title: 'Persuasion' });
    await settle();
    const byFlag = JSON.parse((await bindery('--json', 'bookdrop', 'list', '--bookdrop-dir', elsewhere)).stdout) as { files: { fileName: string }[] };
    expect(byFlag.files.map((f) => f.fileName)).toContain('persuasion.epub');
    const byEnv = await runCli(['--data-dir', lib.dataDir, '--json', 'bookdrop', 'list'], { env: { BINDERY_BOOKDROP_DIR: elsewhere } });
    expect((JSON.parse(byEnv.stdout) as { bookdropDir: string }).bookdropDir).toBe(elsewhere);
  });
});

const items: ReviewItem[] = [
  { id: 1, fileName: 'dune.epub', fileSize: 2048, metadata: { title: 'Dune', authors: ['Frank Herbert'] } },
  { id: 2, fileName: 'emma.epub', fileSize: 4096, metadata: { title: 'Emma' } },
  { id: 3, fileName: 'x.epub', fileSize: null, metadata: {} },
];

function press(state: ReviewState, ...keys: (string | KeyPress)[]): ReviewState {
  return keys.reduce<ReviewState>((s, k) => reviewReducer(s, typeof k === 'string' ? { input: k } : k), state);
}

describe('the review', () => {
  it('accepts, skips, goes back, edits and confirms', () => {
    let s = press(initialReview(items), 'a', 's');
    expect(s.index).toBe(2);
    s = press(s, 'b', 'e');
    expect(s.mode).toBe('edit');
    expect(s.edit!.values.title).toBe('Emma');
    s = press(s, { input: '', backspace: true }, 'a', '!', { input: '', downArrow: true }, ...'Jane Austen'.split(''), { input: '', tab: true }, ...'Novels'.split(''), { input: '', return: true });
    expect(s.mode).toBe('review');
    expect(s.items[1]!.metadata).toEqual({ title: 'Emma!', authors: ['Jane Austen'], seriesName: 'Novels' });
    s = press(s, 'a', 'q');
    expect(s.mode).toBe('confirm');
    s = press(s, 'y');
    expect(s.mode).toBe('done');
    expect(reviewResult(s)).toEqual({
      outcome: 'import',
      accepted: [
        { id: 1, metadata: items[0]!.metadata, edited: false },
        { id: 2, metadata: { title: 'Emma!', authors: ['Jane Austen'], seriesName: 'Novels' }, edited: true },
      ],
    });
  });

  it('escape leaves an edit unchanged; "A" accepts the rest; "n" cancels everything', () => {
    let s = press(initialReview(items), 'e', 'x', { input: '', escape: true });
    expect(s.items[0]!.metadata).toEqual(items[0]!.metadata);
    s = press(s, 's', 'A');
    expect(s.decisions).toEqual(['skip', 'accept', 'accept']);
    expect(reviewResult(press(s, 'n'))).toEqual({ outcome: 'cancel', accepted: [] });
  });

  it('runs in ink on a terminal: draws each file and follows the keys', async () => {
    const stdin = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => stdin, ref: () => stdin, unref: () => stdin });
    let screen = '';
    const stdout = Object.assign(new Writable({ write: (chunk: Buffer, _e, done) => ((screen += chunk.toString()), done()) }), { isTTY: true, columns: 100, rows: 30 });
    const result = runReview(items, { libraryName: 'Books', targetOf: (item) => `${item.metadata.title ?? item.fileName}.epub` }, { stdin, stdout });
    const waitFor = async (text: string): Promise<void> => {
      for (let i = 0; i < 200 && !screen.includes(text); i++) await new Promise((r) => setTimeout(r, 10));
      expect(screen).toContain(text);
    };
    await waitFor('Bookdrop 1/3');
    expect(screen).toContain('Frank Herbert');
    expect(screen).toContain('Dune.epub');
    stdin.write('a');
    await waitFor('Bookdrop 2/3');
    stdin.write('s');
    await waitFor('Bookdrop 3/3');
    stdin.write('a');
    await waitFor('2 of 3 accepted');
    stdin.write('y');
    expect(await result).toEqual({ outcome: 'import', accepted: [{ id: 1, metadata: items[0]!.metadata, edited: false }, { id: 3, metadata: {}, edited: false }] });
  });
});

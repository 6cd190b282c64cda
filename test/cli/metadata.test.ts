// `bindery metadata match` as a script runs it: the real bin/bindery against a catalog of real EPUBs, with the
// providers pointed at a fake server through the environment.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/store/store.ts';
import { runCli, type CliResult } from '../helpers/cli.ts';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

let lib: TempLibrary;
let site: FakeSite;
let ids: { dune: number; emma: number };

const bindery = (...args: string[]): Promise<CliResult> =>
  runCli(['--data-dir', lib.dataDir, ...args], {
    env: { BINDERY_OUTGOING_ALLOW_PRIVATE_HOSTS: '127.0.0.1', BINDERY_METADATA_PROVIDER_BASE_URLS: JSON.stringify({ Google: site.url, OpenLibrary: site.url }) },
  });

async function withStore<T>(work: (store: Awaited<ReturnType<typeof openStore>>) => Promise<T>): Promise<T> {
  const store = await openStore(`${lib.dataDir}/bindery.sqlite`);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

const title = (bookId: number) => withStore(async (s) => (await s.db.selectFrom('book_metadata').select(['title', 'publisher']).where('book_id', '=', bookId).executeTakeFirstOrThrow()));

beforeAll(async () => {
  lib = makeTempLibrary();
  site = await startFakeSite();
  await writeSimpleEpub(lib.path('dune.epub'), { title: 'dune (scan)', authors: ['Frank Herbert'], isbn: '9780441013593' });
  await writeSimpleEpub(lib.path('emma.epub'), { title: 'Emma', authors: ['Jane Austen'] });
  expect((await runCli(['--data-dir', lib.dataDir, 'library', 'add', 'Books', lib.root])).code).toBe(0);
  expect((await runCli(['--data-dir', lib.dataDir, 'scan'])).code).toBe(0);
  ids = await withStore(async (store) => {
    const rows = await store.db.selectFrom('book_metadata').select(['book_id', 'title']).execute();
    const fp = (p1: string | null) => ({ p1, p2: null, p3: null, p4: null });
    await store.db
      .insertInto('app_settings')
      .values([
        { name: 'metadata_provider_settings', val: JSON.stringify({ google: { enabled: true }, openLibrary: { enabled: true } }) },
        { name: 'quick_book_match', val: JSON.stringify({ replaceMode: 'REPLACE_WHEN_PROVIDED', mergeCategories: false, refreshCovers: false, fieldOptions: { title: fp('Google'), publisher: fp('Google'), description: fp('Google') }, enabledFields: {} }) },
      ])
      .execute();
    return { dune: rows.find((r) => r.title === 'dune (scan)')?.book_id as number, emma: rows.find((r) => r.title === 'Emma')?.book_id as number };
  });
}, 60_000);
afterAll(async () => {
  await site?.close();
  lib?.cleanup();
});
beforeEach(() => {
  site.reset();
  site.on('GET', '/volumes', (r) =>
    r.query.get('q') === 'isbn:9780441013593'
      ? { json: { totalItems: 1, items: [{ id: 'vol-dune', volumeInfo: { title: 'Dune', authors: ['Frank Herbert'], publisher: 'Ace', industryIdentifiers: [{ type: 'ISBN_13', identifier: '9780441013593' }] } }] } }
      : { json: { totalItems: 0 } },
  );
});

describe('bindery metadata match', () => {
  it('--dry-run --json shows what would change and writes nothing', async () => {
    const res = await bindery('--json', 'metadata', 'match', '--dry-run');
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout) as Record<string, unknown>;
    expect(out).toEqual({
      dryRun: true,
      review: false,
      taskId: null,
      total: 2,
      processed: 2,
      cancelled: false,
      counts: { updated: 1, unchanged: 0, proposed: 0, 'no-match': 1, locked: 0, failed: 0, missing: 0 },
      books: [
        {
          bookId: ids.dune,
          title: 'dune (scan)',
          status: 'updated',
          changes: expect.arrayContaining([
            { field: 'title', from: 'dune (scan)', to: 'Dune', source: 'Google' },
            { field: 'publisher', from: null, to: 'Ace', source: 'Google' },
            { field: 'googleId', from: null, to: 'vol-dune', source: 'Google' },
          ]),
          matched: { Google: 'vol-dune' },
          errors: [],
        },
        { bookId: ids.emma, title: 'Emma', status: 'no-match', changes: [], matched: {}, errors: [] },
      ],
    });
    expect(res.stderr).toBe('');
    expect(await title(ids.dune)).toEqual({ title: 'dune (scan)', publisher: null });
    expect(await withStore((s) => s.db.selectFrom('metadata_fetch_jobs').select('task_id').execute())).toEqual([]);
  });

  it('--review stores proposals instead of applying them', async () => {
    const res = await bindery('--json', 'metadata', 'match', '--book', String(ids.dune), '--review');
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout) as { taskId: string; books: { status: string; proposalId?: number }[] };
    expect(out.books[0]).toMatchObject({ status: 'proposed', proposalId: expect.any(Number) });
    const proposals = await withStore((s) => s.db.selectFrom('metadata_fetch_proposals').select(['task_id', 'status', 'metadata_json']).execute());
    expect(proposals).toEqual([{ task_id: out.taskId, status: 'FETCHED', metadata_json: expect.stringContaining('"title":"Dune"') }]);
    expect((await title(ids.dune)).title).toBe('dune (scan)');
  });

  it('applies the match, with a line per book on stderr and a summary', async () => {
    const res = await bindery('metadata', 'match', '--library', 'Books', '--provider', 'google');
    expect(res.code).toBe(0);
    expect(res.stderr).toMatch(/\[1\/2\] #\d+ dune \(scan\): updated/);
    expect(res.stdout).toMatch(/title: dune \(scan\) → Dune {2}\[Google\]/);
    expect(res.stdout).toMatch(/2 books: 1 updated, 0 proposed for review, 0 unchanged, 1 not found, 0 locked, 0 failed/);
    expect(await title(ids.dune)).toEqual({ title: 'Dune', publisher: 'Ace' });
    const again = await bindery('--json', 'metadata', 'match', '--book', String(ids.dune));
    expect(JSON.parse(again.stdout)).toMatchObject({ counts: { unchanged: 1 } });
  });

  it('exits 5 and names the provider when it blocks', async () => {
    site.reset();
    site.on('GET', /.*/, { status: 429, headers: { 'retry-after': '60' }, html: 'slow down' });
    const res = await bindery('--json', 'metadata', 'match', '--book', String(ids.emma));
    expect(res.code).toBe(5);
    expect(JSON.parse(res.stdout)).toMatchObject({ books: [{ status: 'failed', errors: ['Google Books: asked to slow down (HTTP 429); retry after 60 s'] }] });
  });

  it('refuses bad arguments with the documented exit codes', async () => {
    expect((await bindery('metadata', 'match', '--provider', 'Nope')).code).toBe(2);
    expect((await bindery('metadata', 'match', '--provider', 'Hardcover')).stderr).toMatch(/Hardcover: is not enabled/);
    expect((await bindery('metadata', 'match', '--book', '1', '--library', 'Books')).code).toBe(2);
    const missing = await bindery('--json', 'metadata', 'match', '--book', '999999');
    expect(missing.code).toBe(3);
    expect(JSON.parse(missing.stdout)).toEqual({ error: { code: 'BOOK_NOT_FOUND', message: 'no book with id 999999' } });
    expect((await bindery('metadata', 'match', '--library', 'Nowhere')).code).toBe(3);
  });

  it('keeps the sidecar subcommands', async () => {
    const help = await bindery('metadata', '--help');
    expect(help.stdout).toMatch(/match/);
    expect(help.stdout).toMatch(/sidecar/);
  });
});

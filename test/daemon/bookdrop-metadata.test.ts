// Provider metadata for dropped files, as the daemon wires it: with METADATA_DOWNLOAD_ON_BOOKDROP on, a file with an
// ISBN is looked up with the quick-match providers (a fake Google Books here) and the proposal is kept as
// fetchedMetadata; an import without per-file metadata uses it over what the file says.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finalizeImport } from '../../src/core/bookdrop/finalize.ts';
import { syncBookdrop } from '../../src/core/bookdrop/intake.ts';
import { createLibrary } from '../../src/core/libraries/libraries.ts';
import { daemonBookdropFetcher } from '../../src/daemon/bookdrop-fetcher.ts';
import { daemonBookdropEnv } from '../../src/daemon/bookdrop-watcher.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

let d: TestDaemon;
let site: FakeSite;
let lib: TempLibrary;
let admin: string;

const fp = (p1: string | null) => ({ p1, p2: null, p3: null, p4: null });

beforeAll(async () => {
  site = await startFakeSite();
  lib = makeTempLibrary();
  d = await startTestDaemon({ outgoingAllowPrivateHosts: '127.0.0.1', metadataProviderBaseUrls: JSON.stringify({ Google: site.url }) });
  admin = await d.setupAdmin();
  const res = await d.inject({
    method: 'PUT',
    url: '/api/v1/settings',
    headers: { authorization: `Bearer ${admin}` },
    payload: [
      { name: 'METADATA_PROVIDER_SETTINGS', value: { google: { enabled: true, apiKey: null }, amazon: { enabled: false }, goodReads: { enabled: false } } },
      { name: 'QUICK_BOOK_MATCH', value: { replaceMode: 'REPLACE_MISSING', mergeCategories: true, fieldOptions: { title: fp('Google'), description: fp('Google'), publisher: fp('Google'), pageCount: fp('Google'), authors: fp('Google') }, enabledFields: {} } },
    ],
  });
  expect(res.statusCode).toBe(200);
  site.on('GET', '/volumes', (r) => {
    const isbn = r.query.get('q')?.replace(/^isbn:/, '') ?? '';
    const hit = isbn === '9780441013593'
      ? { kind: 'books#volume', id: 'vol-dune', volumeInfo: { title: 'Dune', authors: ['Frank Herbert'], publisher: 'Ace Books', description: 'The desert planet.', industryIdentifiers: [{ type: 'ISBN_13', identifier: isbn }], pageCount: 604, language: 'en' } }
      : undefined;
    return { json: hit ? { kind: 'books#volumes', totalItems: 1, items: [hit] } : { kind: 'books#volumes', totalItems: 0 } };
  });
}, 60_000);

afterAll(async () => {
  await d?.close();
  await site?.close();
  lib?.cleanup();
});

describe('provider metadata on the bookdrop', () => {
  it('keeps what the providers propose and imports with it', async () => {
    await writeSimpleEpub(join(d.config.bookdropDir, 'dune-scan.epub'), { title: 'dune (scan)', isbn: '9780441013593' });
    const env = daemonBookdropEnv(d.ctx, daemonBookdropFetcher(d.ctx));
    const summary = await syncBookdrop(env, { settleMs: 0 });
    expect(summary.added).toHaveLength(1);
    expect(site.requests.some((r) => r.path === '/volumes')).toBe(true);
    const row = await d.store.db.selectFrom('bookdrop_file').selectAll().executeTakeFirstOrThrow();
    expect(JSON.parse(row.fetched_metadata!)).toMatchObject({ title: 'Dune', authors: ['Frank Herbert'], publisher: 'Ace Books', description: 'The desert planet.', pageCount: 604 });
    expect(JSON.parse(row.original_metadata!)).toMatchObject({ title: 'dune (scan)', isbn13: '9780441013593' });

    const library = await createLibrary(d.store.db, { name: 'Books', paths: [lib.root] });
    const outcome = await finalizeImport(env, { selectAll: true, defaultLibraryId: library.id, defaultPathId: library.paths[0]!.id });
    expect(outcome.results[0]).toMatchObject({ success: true, fileName: 'Dune - Frank Herbert.epub' });
    const meta = await d.store.db.selectFrom('book_metadata').select(['title', 'publisher', 'description', 'isbn_13']).where('book_id', '=', outcome.results[0]!.bookId!).executeTakeFirstOrThrow();
    expect(meta).toEqual({ title: 'Dune', publisher: 'Ace Books', description: 'The desert planet.', isbn_13: '9780441013593' });
  });

  it('asks nobody when the setting is off', async () => {
    site.requests.length = 0;
    const res = await d.inject({ method: 'PUT', url: '/api/v1/settings', headers: { authorization: `Bearer ${admin}` }, payload: [{ name: 'METADATA_DOWNLOAD_ON_BOOKDROP', value: false }] });
    expect(res.statusCode).toBe(200);
    await writeSimpleEpub(join(d.config.bookdropDir, 'other.epub'), { title: 'Other Book', isbn: '9780441013593' });
    await syncBookdrop(daemonBookdropEnv(d.ctx, daemonBookdropFetcher(d.ctx)), { settleMs: 0 });
    expect(site.requests).toEqual([]);
    const row = await d.store.db.selectFrom('bookdrop_file').selectAll().where('file_name', '=', 'other.epub').executeTakeFirstOrThrow();
    expect(row.fetched_metadata).toBeNull();
  });
});

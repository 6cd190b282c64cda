import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { InjectOptions } from 'fastify';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';
import { amazonCaptchaPage, amazonProductPage, goodreadsBookPage, lubimyczytacBookPage } from '../helpers/provider-pages.ts';

let d: TestDaemon;
let site: FakeSite;
let tmp: TempDir;
let admin: string;
let editor: string;
let reader: string;
let outsider: string;
let bookId: number;
let hiddenBookId: number;

const call = (token: string, options: InjectOptions) => d.inject({ ...options, headers: { ...(options.headers ?? {}), authorization: `Bearer ${token}` } });
const list = (token: string, id = bookId) => call(token, { method: 'GET', url: `/api/v1/reviews/book/${id}` });
const refresh = (token: string, id = bookId) => call(token, { method: 'POST', url: `/api/v1/reviews/book/${id}/refresh` });

async function reviewSettings(value: Record<string, unknown>): Promise<void> {
  const val = JSON.stringify({ downloadEnabled: true, autoDownloadEnabled: false, ...value });
  await d.store.db.insertInto('app_settings').values({ name: 'metadata_public_reviews_settings', val }).onConflict((oc) => oc.column('name').doUpdateSet({ val })).execute();
}

const AMAZON_REVIEWS = [
  { name: 'Old Reader', title: 'Fine', stars: '3.0 out of 5 stars', dateLine: 'Reviewed in the United States on January 2, 2020', body: 'It was fine.' },
  { name: 'New Reader', title: 'Wonderful', stars: '5.0 out of 5 stars', dateLine: 'Reviewed in the United Kingdom on May 5, 2024', body: 'Wonderful book.' },
];

beforeAll(async () => {
  site = await startFakeSite();
  tmp = makeTempDir('bindery-reviews-');
  d = await startTestDaemon({
    outgoingAllowPrivateHosts: '127.0.0.1',
    metadataProviderBaseUrls: JSON.stringify({ Amazon: site.url, GoodReads: site.url, Lubimyczytac: site.url }),
  });
  admin = await d.setupAdmin();
  const library = await seedLibrary(d.store.db, tmp.dir, 'Main');
  const secret = await seedLibrary(d.store.db, tmp.dir, 'Secret');
  bookId = (await seedBook(d.store.db, library, { title: 'The Hobbit', authors: ['J.R.R. Tolkien'] })).bookId;
  hiddenBookId = (await seedBook(d.store.db, secret, { title: 'Diary' })).bookId;
  await d.store.db.updateTable('book_metadata').set({ asin: '054792822X', goodreads_id: '5907', lubimyczytac_id: '4804' }).where('book_id', '=', bookId).execute();
  editor = (await d.createUser('editor', { canEditMetadata: true }, [library])).token;
  reader = (await d.createUser('reader', {}, [library])).token;
  outsider = (await d.createUser('outsider', { canEditMetadata: true }, [])).token;
}, 60_000);

afterAll(async () => {
  await d?.close();
  await site?.close();
  tmp?.remove();
});

beforeEach(async () => {
  site.reset();
  await d.store.db.deleteFrom('public_book_review').execute();
  await d.store.db.updateTable('book_metadata').set({ reviews_locked: 0 }).execute();
});

describe('review listing and refresh', () => {
  it('lists nothing as 204, refreshes from the enabled providers within maxReviews, newest first, then lists them', async () => {
    await reviewSettings({ providers: [{ provider: 'Amazon', enabled: true, maxReviews: 1 }, { provider: 'GoodReads', enabled: false, maxReviews: 5 }] });
    site.on('GET', '/dp/054792822X', { html: amazonProductPage({ title: 'The Hobbit', authors: [{ name: 'J. R. R. Tolkien' }], reviews: AMAZON_REVIEWS }) });

    const empty = await list(reader);
    expect(empty.statusCode).toBe(204);
    expect(empty.body).toBe('');

    const res = await refresh(editor);
    expect(res.statusCode).toBe(200);
    expect(site.requests.map((r) => r.path)).toEqual(['/dp/054792822X']);
    const reviews = res.json() as Record<string, unknown>[];
    expect(reviews).toEqual([
      { id: expect.any(Number), metadataProvider: 'Amazon', reviewerName: 'New Reader', title: 'Wonderful', rating: 5, date: '2024-05-05T00:00:00Z', body: 'Wonderful book.', country: 'United Kingdom' },
    ]);
    const listed = await list(reader);
    expect(listed.statusCode).toBe(200);
    expect(listed.json()).toEqual(reviews);
  });

  it('keeps the reviews of a provider that failed and replaces those of the one that answered', async () => {
    await reviewSettings({ providers: [{ provider: 'Lubimyczytac', enabled: true, maxReviews: 5 }, { provider: 'GoodReads', enabled: true, maxReviews: 5 }] });
    site.on('GET', '/ksiazka/4804', {
      html: lubimyczytacBookPage({ id: '4804', title: 'Hobbit', authors: ['J.R.R. Tolkien'], isbn: '9788324400001', reviews: [{ author: 'Czytelnik', date: '2021-02-03 10:00:00', body: 'Piękna.', rating: '10' }] }),
    });
    site.on('GET', '/book/show/5907', { html: goodreadsBookPage({ legacyId: 5907, title: 'The Hobbit', author: 'J.R.R. Tolkien', reviews: [{ name: 'Reader Two', text: 'A delight.', rating: 5, updatedAt: 1690000000000 }] }) });
    const first = await refresh(admin);
    expect(first.statusCode).toBe(200);
    expect((first.json() as { metadataProvider: string }[]).map((r) => r.metadataProvider).sort()).toEqual(['GoodReads', 'Lubimyczytac']);
    const goodreadsReview = (first.json() as { metadataProvider: string; id: number; spoiler?: boolean; followersCount?: number }[]).find((r) => r.metadataProvider === 'GoodReads');
    expect(goodreadsReview).toMatchObject({ spoiler: false, followersCount: 10, textReviewsCount: 5, rating: 5 });

    // Goodreads now shows a robot check: its reviews stay, Lubimyczytac's are replaced.
    site.reset();
    site.on('GET', '/ksiazka/4804', { html: lubimyczytacBookPage({ id: '4804', title: 'Hobbit', authors: ['J.R.R. Tolkien'], isbn: '9788324400001', reviews: [{ author: 'Nowy', date: '2023-01-01 10:00:00', body: 'Nowa opinia.', rating: '8' }] }) });
    site.on('GET', '/book/show/5907', { status: 503, html: amazonCaptchaPage() });
    const second = await refresh(admin);
    expect(second.statusCode).toBe(200);
    const after = second.json() as { metadataProvider: string; id: number; reviewerName: string; rating: number }[];
    expect(after.find((r) => r.metadataProvider === 'GoodReads')?.id).toBe(goodreadsReview?.id);
    expect(after.filter((r) => r.metadataProvider === 'Lubimyczytac').map((r) => [r.reviewerName, r.rating])).toEqual([['Nowy', 4]]);
  });

  it('answers 502 naming the provider when every provider failed, touching nothing', async () => {
    await reviewSettings({ providers: [{ provider: 'Amazon', enabled: true, maxReviews: 5 }] });
    site.on('GET', '/dp/054792822X', { html: amazonProductPage({ title: 'The Hobbit', authors: [{ name: 'Tolkien' }], reviews: AMAZON_REVIEWS }) });
    expect((await refresh(admin)).statusCode).toBe(200);
    site.reset();
    site.on('GET', '/dp/054792822X', { html: amazonCaptchaPage() });
    const res = await refresh(admin);
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({ status: 502, message: expect.stringMatching(/^Could not refresh reviews: Amazon: .*robot check/) });
    expect((await list(reader)).json()).toHaveLength(2);
  });

  it('refuses to refresh when downloads are off, and leaves locked reviews alone', async () => {
    await reviewSettings({ downloadEnabled: false, providers: [{ provider: 'Amazon', enabled: true, maxReviews: 5 }] });
    const off = await refresh(admin);
    expect(off.statusCode).toBe(400);
    expect(off.json()).toMatchObject({ message: expect.stringContaining('turned off') });

    await reviewSettings({ providers: [{ provider: 'Amazon', enabled: true, maxReviews: 5 }] });
    await d.store.db.updateTable('book_metadata').set({ reviews_locked: 1 }).where('book_id', '=', bookId).execute();
    const locked = await refresh(admin);
    expect(locked.statusCode).toBe(200);
    expect(locked.json()).toEqual([]);
    expect(site.requests).toHaveLength(0);
  });

  it('downloads on first listing only when automatic downloads are on and the caller manages libraries', async () => {
    await reviewSettings({ autoDownloadEnabled: true, providers: [{ provider: 'GoodReads', enabled: true, maxReviews: 5 }] });
    site.on('GET', '/book/show/5907', { html: goodreadsBookPage({ legacyId: 5907, title: 'The Hobbit', author: 'Tolkien', reviews: [{ name: 'Auto', text: 'Fetched on view.', rating: 4, updatedAt: 1690000000000 }] }) });
    expect((await list(reader)).statusCode).toBe(204);
    expect(site.requests).toHaveLength(0);
    const res = await list(admin);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([{ id: expect.any(Number), metadataProvider: 'GoodReads', reviewerName: 'Auto', rating: 4, date: '2023-07-22T04:26:40Z', body: 'Fetched on view.', spoiler: false, followersCount: 10, textReviewsCount: 5 }]);
    expect((await list(reader)).statusCode).toBe(200);
    expect(site.requests).toHaveLength(1);
  });
});

describe('review deletion and access', () => {
  async function seedReviews(): Promise<number[]> {
    const rows = await d.store.db
      .insertInto('public_book_review')
      .values([
        { book_id: bookId, metadata_provider: 'Amazon', body: 'one', reviewer_name: 'A', rating: 4, spoiler: null },
        { book_id: bookId, metadata_provider: 'Douban', body: 'two', reviewer_name: 'B', rating: 5, spoiler: 1 },
        { book_id: hiddenBookId, metadata_provider: 'Amazon', body: 'secret', reviewer_name: 'C', rating: 1, spoiler: 0 },
      ])
      .returning('id')
      .execute();
    return rows.map((r) => r.id);
  }

  it('deletes one review (404 once gone) and all of a book', async () => {
    const [one, two] = await seedReviews();
    expect((await call(editor, { method: 'DELETE', url: `/api/v1/reviews/${one}` })).statusCode).toBe(204);
    const again = await call(editor, { method: 'DELETE', url: `/api/v1/reviews/${one}` });
    expect(again.statusCode).toBe(404);
    expect(again.json()).toMatchObject({ status: 404, message: `Review not found: ${one}` });
    expect((await list(reader)).json()).toEqual([{ id: two, metadataProvider: 'Douban', reviewerName: 'B', rating: 5, body: 'two', spoiler: true }]);
    expect((await call(editor, { method: 'DELETE', url: `/api/v1/reviews/book/${bookId}` })).statusCode).toBe(204);
    expect((await list(reader)).statusCode).toBe(204);
    // The other book's review is untouched.
    expect(await d.store.db.selectFrom('public_book_review').select('book_id').execute()).toEqual([{ book_id: hiddenBookId }]);
  });

  it('needs canEditMetadata to change reviews and the book’s library to see or change them', async () => {
    const [one, , secret] = await seedReviews();
    expect((await call(reader, { method: 'DELETE', url: `/api/v1/reviews/${one}` })).statusCode).toBe(403);
    expect((await refresh(reader)).statusCode).toBe(403);
    expect((await list(outsider)).statusCode).toBe(403);
    expect((await call(editor, { method: 'DELETE', url: `/api/v1/reviews/${secret}` })).statusCode).toBe(403);
    expect((await call(editor, { method: 'DELETE', url: `/api/v1/reviews/book/${hiddenBookId}` })).statusCode).toBe(403);
    expect((await list(reader, hiddenBookId)).statusCode).toBe(403);
    expect((await list(admin, 999999)).statusCode).toBe(404);
    expect((await call(admin, { method: 'GET', url: '/api/v1/reviews/book/0' })).statusCode).toBe(400);
    expect(await d.store.db.selectFrom('public_book_review').select('id').execute()).toHaveLength(3);
  });

  it('goes with the book', async () => {
    const library = await seedLibrary(d.store.db, tmp.dir, 'Temp');
    const temp = (await seedBook(d.store.db, library, { title: 'Ephemeral' })).bookId;
    await d.store.db.insertInto('public_book_review').values({ book_id: temp, metadata_provider: 'Amazon', body: 'x' }).execute();
    await d.store.db.deleteFrom('book').where('id', '=', temp).execute();
    expect(await d.store.db.selectFrom('public_book_review').select('id').where('book_id', '=', temp).execute()).toEqual([]);
  });
});

// Merging provider answers into books: per-field priorities (fieldOptions p1..p4), enabledFields, the three replace
// modes, mergeCategories, field locks and allMetadataLocked, written through the real metadata tables; and the match
// score computed from METADATA_MATCH_WEIGHTS.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHttpClient } from '../../src/core/net/http-client.ts';
import { computeMatchScore, matchWeights } from '../../src/core/metadata/match-score.ts';
import { fetchedMetadata, planMerge, providersToQuery, refreshOptionsFrom, withSingleProvider, type RefreshOptions } from '../../src/core/metadata/merge.ts';
import { applyMergePlan, readCurrentMetadata } from '../../src/core/metadata/metadata-apply.ts';
import type { MetadataCandidate, ProviderId } from '../../src/core/metadata/provider.ts';
import { MATCH_WEIGHT_DEFAULTS } from '../../src/core/settings/setting-shapes.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';

const google: MetadataCandidate = {
  provider: 'Google',
  providerItemId: 'g1',
  googleId: 'g1',
  title: 'Dune (Google)',
  description: 'From Google.',
  publisher: 'Penguin',
  authors: ['Frank Herbert'],
  categories: ['Fiction', 'Science Fiction'],
  pageCount: 544,
  isbn13: '9780441013593',
};
const openLibrary: MetadataCandidate = {
  provider: 'OpenLibrary',
  providerItemId: 'OL1W',
  title: 'Dune (OL)',
  publisher: 'Ace',
  authors: ['Frank Herbert'],
  categories: ['Deserts', 'Fiction'],
  goodreadsId: '234225',
};
const hardcover: MetadataCandidate = { provider: 'Hardcover', providerItemId: '312460', hardcoverId: 'dune', hardcoverBookId: '312460', hardcoverRating: 4.3, moods: ['dark', 'adventurous'], tags: ['Space Opera'] };

function options(raw: Record<string, unknown> = {}): RefreshOptions {
  const fp = (p1: ProviderId | null, p2: ProviderId | null = null) => ({ p1, p2, p3: null, p4: null });
  return refreshOptionsFrom({
    replaceMode: 'REPLACE_MISSING',
    mergeCategories: false,
    refreshCovers: false,
    fieldOptions: { title: fp('OpenLibrary', 'Google'), description: fp('OpenLibrary', 'Google'), publisher: fp('Google', 'OpenLibrary'), categories: fp('Google', 'OpenLibrary'), authors: fp('Google'), pageCount: fp('Google'), isbn13: fp('Google'), cover: fp('Google') },
    ...raw,
  });
}

const found = (...candidates: MetadataCandidate[]) => new Map(candidates.map((c) => [c.provider, c]));

describe('resolving fields from providers', () => {
  it('takes each field from the first provider in its priority list that has it', () => {
    const { metadata, sources } = fetchedMetadata(found(google, openLibrary), options());
    expect(metadata.title).toBe('Dune (OL)');
    expect(sources.title).toBe('OpenLibrary');
    // p1 has no description: p2 gives it.
    expect(metadata.description).toBe('From Google.');
    expect(sources.description).toBe('Google');
    expect(metadata.publisher).toBe('Penguin');
    // Provider-owned ids come from their provider when it answered, even with no priority set.
    expect(metadata.googleId).toBe('g1');
    expect(metadata.goodreadsId).toBeUndefined();
  });

  it('skips fields switched off in enabledFields', () => {
    const { metadata } = fetchedMetadata(found(google, openLibrary), options({ enabledFields: { description: false, googleId: false } }));
    expect(metadata).not.toHaveProperty('description');
    expect(metadata).not.toHaveProperty('googleId');
    expect(metadata.title).toBe('Dune (OL)');
  });

  it('merges categories of every listed provider with mergeCategories, else takes the first', () => {
    expect(fetchedMetadata(found(google, openLibrary), options({ mergeCategories: true })).metadata.categories).toEqual(['Fiction', 'Science Fiction', 'Deserts']);
    expect(fetchedMetadata(found(google, openLibrary), options()).metadata.categories).toEqual(['Fiction', 'Science Fiction']);
  });

  it('asks only the enabled, usable providers the priorities name; --provider makes one the source of everything', () => {
    const usable = (id: ProviderId) => id !== 'Hardcover';
    expect(providersToQuery(options(), usable).sort()).toEqual(['Google', 'OpenLibrary']);
    expect(providersToQuery(options({ enabledFields: { title: false, description: false, publisher: false, categories: false } }), usable)).toEqual(['Google']);
    const single = withSingleProvider(options(), 'OpenLibrary');
    expect(providersToQuery(single, () => true)).toEqual(['OpenLibrary']);
    expect(fetchedMetadata(found(google, openLibrary), single).metadata.description).toBeUndefined();
  });

  it('marks fields every asked provider answered without, for REPLACE_ALL', () => {
    const withSubtitle = options({ fieldOptions: { ...options().fieldOptions, subtitle: { p1: 'Google', p2: 'OpenLibrary', p3: null, p4: null } } });
    const { unanswered } = fetchedMetadata(found(google, openLibrary), withSubtitle);
    expect(unanswered).toContain('subtitle');
    // Hardcover was not asked: its fields are not known to be empty.
    expect(fetchedMetadata(found(google), options({ fieldOptions: { ...options().fieldOptions, subtitle: { p1: 'Google', p2: 'Hardcover', p3: null, p4: null } } })).unanswered).not.toContain('subtitle');
    expect(unanswered).not.toContain('title');
  });
});

describe('merging into a book', () => {
  let dir: TempDir;
  let store: Store;
  let site: FakeSite;
  let libraryId: number;
  let png: Buffer;
  const http = createHttpClient({ allowPrivateHosts: ['127.0.0.1'] });

  beforeAll(async () => {
    dir = makeTempDir('bindery-merge-');
    store = await openStore(join(dir.dir, 'bindery.sqlite'));
    libraryId = await seedLibrary(store.db, dir.dir, 'Books');
    site = await startFakeSite();
    png = await sharp({ create: { width: 300, height: 450, channels: 3, background: '#336699' } }).png().toBuffer();
  });
  afterAll(async () => {
    await site.close();
    await store.close();
    dir.remove();
  });
  beforeEach(() => site.reset());

  async function book(title: string, extra: Record<string, unknown> = {}, authors: string[] = []): Promise<number> {
    const { bookId } = await seedBook(store.db, libraryId, { title, authors });
    if (Object.keys(extra).length > 0) await store.db.updateTable('book_metadata').set(extra).where('book_id', '=', bookId).execute();
    return bookId;
  }

  async function merge(bookId: number, opts: RefreshOptions, ...candidates: MetadataCandidate[]) {
    const current = await readCurrentMetadata(store.db, bookId);
    if (!current) throw new Error('no book');
    const plan = planMerge(current, fetchedMetadata(found(...candidates), opts), { replaceMode: opts.replaceMode, mergeCategories: opts.mergeCategories, refreshCovers: opts.refreshCovers });
    return { plan, outcome: await applyMergePlan({ db: store.db, http, coversRoot: join(dir.dir, 'covers') }, bookId, plan) };
  }

  const row = (bookId: number) => store.db.selectFrom('book_metadata').selectAll().where('book_id', '=', bookId).executeTakeFirstOrThrow();
  const names = async (bookId: number, mapping: 'book_metadata_category_mapping' | 'book_metadata_mood_mapping') => {
    const current = await readCurrentMetadata(store.db, bookId);
    return (current?.values[mapping === 'book_metadata_category_mapping' ? 'categories' : 'moods'] as string[] | undefined) ?? [];
  };

  it('REPLACE_MISSING fills only empty fields', async () => {
    const id = await book('My Dune', { description: 'Mine.' });
    const { plan } = await merge(id, options(), google, openLibrary);
    const r = await row(id);
    expect(r.title).toBe('My Dune');
    expect(r.description).toBe('Mine.');
    expect(r.publisher).toBe('Penguin');
    expect(r.page_count).toBe(544);
    expect(r.isbn_13).toBe('9780441013593');
    expect(r.google_id).toBe('g1');
    expect(plan.changes.map((c) => c.field)).not.toContain('title');
    expect((await readCurrentMetadata(store.db, id))?.values.authors).toEqual(['Frank Herbert']);
  });

  it('REPLACE_WHEN_PROVIDED replaces what a provider gave and keeps the rest', async () => {
    const id = await book('My Dune', { description: 'Mine.', subtitle: 'Keep me', publisher: 'Old' });
    await merge(id, options({ replaceMode: 'REPLACE_WHEN_PROVIDED' }), google, openLibrary);
    const r = await row(id);
    expect(r.title).toBe('Dune (OL)');
    expect(r.description).toBe('From Google.');
    expect(r.publisher).toBe('Penguin');
    expect(r.subtitle).toBe('Keep me');
  });

  it('REPLACE_ALL also empties fields every asked provider answered without (never the title)', async () => {
    const id = await book('My Dune', { subtitle: 'Stale subtitle' });
    const opts = options({ replaceMode: 'REPLACE_ALL', fieldOptions: { ...options().fieldOptions, subtitle: { p1: 'Google', p2: null, p3: null, p4: null } } });
    await merge(id, opts, google);
    const r = await row(id);
    expect(r.subtitle).toBeNull();
    expect(r.title).toBe('Dune (Google)');
  });

  it('leaves locked fields alone, and every field with allMetadataLocked', async () => {
    const id = await book('Locked title', { title_locked: 1, publisher_locked: 1 });
    const { plan, outcome } = await merge(id, options({ replaceMode: 'REPLACE_WHEN_PROVIDED' }), google, openLibrary);
    expect(plan.lockedFields).toEqual(expect.arrayContaining(['title', 'publisher']));
    expect(outcome.changed).toContain('description');
    const r = await row(id);
    expect(r.title).toBe('Locked title');
    expect(r.publisher).toBeNull();
    expect(r.description).toBe('From Google.');

    const all = await book('All locked', { all_fields_locked: 1 });
    const both = await merge(all, options({ replaceMode: 'REPLACE_ALL' }), google, openLibrary);
    expect(both.plan.allLocked).toBe(true);
    expect(both.plan.changes).toEqual([]);
    expect((await row(all)).title).toBe('All locked');
    expect((await row(all)).description).toBeNull();
  });

  it('merges categories with the existing ones with mergeCategories, replaces them without', async () => {
    const id = await book('Cats');
    await store.db.insertInto('category').values({ name: 'Mine' }).onConflict((oc) => oc.column('name').doNothing()).execute();
    const mine = await store.db.selectFrom('category').select('id').where('name', '=', 'Mine').executeTakeFirstOrThrow();
    await store.db.insertInto('book_metadata_category_mapping').values({ book_id: id, category_id: mine.id }).execute();
    await merge(id, options({ replaceMode: 'REPLACE_WHEN_PROVIDED', mergeCategories: true }), google, openLibrary);
    expect((await names(id, 'book_metadata_category_mapping')).sort()).toEqual(['Deserts', 'Fiction', 'Mine', 'Science Fiction']);
    await merge(id, options({ replaceMode: 'REPLACE_WHEN_PROVIDED', mergeCategories: false }), google);
    expect((await names(id, 'book_metadata_category_mapping')).sort()).toEqual(['Fiction', 'Science Fiction']);
  });

  it('takes moods, tags and Hardcover ids from Hardcover, and merges moods unless REPLACE_ALL', async () => {
    const id = await book('Moody');
    const opts = options({ replaceMode: 'REPLACE_WHEN_PROVIDED', fieldOptions: { title: { p1: 'Hardcover', p2: null, p3: null, p4: null } } });
    await merge(id, opts, hardcover);
    expect((await names(id, 'book_metadata_mood_mapping')).sort()).toEqual(['adventurous', 'dark']);
    const r = await row(id);
    expect([r.hardcover_id, r.hardcover_book_id, r.hardcover_rating]).toEqual(['dune', '312460', 4.3]);
    await merge(id, opts, { ...hardcover, moods: ['tense'] });
    expect((await names(id, 'book_metadata_mood_mapping')).sort()).toEqual(['adventurous', 'dark', 'tense']);
    await merge(id, { ...opts, replaceMode: 'REPLACE_ALL' }, { ...hardcover, moods: ['tense'] });
    expect(await names(id, 'book_metadata_mood_mapping')).toEqual(['tense']);
  });

  it('downloads the cover through the outgoing client for a book without one, and keeps an existing cover unless refreshCovers', async () => {
    site.on('GET', '/cover.png', { body: png, contentType: 'image/png' });
    const id = await book('Covered');
    const { outcome } = await merge(id, options(), { ...google, thumbnailUrl: `${site.url}/cover.png` });
    expect(outcome.coverUpdated).toBe(true);
    expect(existsSync(join(dir.dir, 'covers', String(id), 'cover.jpg'))).toBe(true);
    const b = await store.db.selectFrom('book').select(['book_cover_hash', 'metadata_match_score']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(b.book_cover_hash).toEqual(expect.any(String));
    expect((await row(id)).cover_updated_on).toEqual(expect.any(String));

    const again = await merge(id, options(), { ...google, thumbnailUrl: `${site.url}/cover.png` });
    expect(again.plan.coverUrl).toBeUndefined();
    const refreshed = await merge(id, options({ refreshCovers: true }), { ...google, thumbnailUrl: `${site.url}/cover.png` });
    expect(refreshed.outcome.coverUpdated).toBe(true);

    const locked = await book('Cover locked', { cover_locked: 1 });
    const none = await merge(locked, options({ refreshCovers: true }), { ...google, thumbnailUrl: `${site.url}/cover.png` });
    expect(none.plan.coverUrl).toBeUndefined();
    expect(none.plan.lockedFields).toContain('thumbnailUrl');
  });

  it('reports a cover that cannot be fetched and writes the rest', async () => {
    site.on('GET', '/cover.png', { html: '<html>nope</html>' });
    const id = await book('Bad cover');
    const { outcome } = await merge(id, options(), { ...google, thumbnailUrl: `${site.url}/cover.png` });
    expect(outcome.coverUpdated).toBe(false);
    expect(outcome.coverError).toMatch(/text\/html/);
    expect((await row(id)).publisher).toBe('Penguin');
  });

  it('keeps metadataMatchScore up to date', async () => {
    const id = await book('Scored');
    const before = await store.db.selectFrom('book').select('metadata_match_score').where('id', '=', id).executeTakeFirstOrThrow();
    const { outcome } = await merge(id, options(), google);
    expect(outcome.matchScore).toBeGreaterThan(0);
    const after = await store.db.selectFrom('book').select('metadata_match_score').where('id', '=', id).executeTakeFirstOrThrow();
    expect(after.metadata_match_score).toBeCloseTo(outcome.matchScore as number);
    expect(after.metadata_match_score).not.toBe(before.metadata_match_score);
  });
});

describe('the match score', () => {
  const total = Object.values(MATCH_WEIGHT_DEFAULTS).reduce((a: number, b: number) => a + b, 0);

  it('is the share of the weights of the fields the book has, in percent', () => {
    expect(computeMatchScore({}, MATCH_WEIGHT_DEFAULTS)).toBe(0);
    expect(computeMatchScore({ title: 'Dune' }, MATCH_WEIGHT_DEFAULTS)).toBeCloseTo((10 / total) * 100, 5);
    expect(computeMatchScore({ title: 'Dune', authors: ['Frank Herbert'], coverUpdatedOn: '2025-01-01T00:00:00Z' }, MATCH_WEIGHT_DEFAULTS)).toBeCloseTo((25 / total) * 100, 5);
  });

  it('ignores blank text, empty lists and zero ratings, and counts a locked field as present', () => {
    expect(computeMatchScore({ title: '  ', authors: [], amazonRating: 0, pageCount: 0 }, MATCH_WEIGHT_DEFAULTS)).toBe(0);
    expect(computeMatchScore({ titleLocked: true, coverLocked: true }, MATCH_WEIGHT_DEFAULTS)).toBeCloseTo((15 / total) * 100, 5);
  });

  it('reaches 100 for a book with everything, Douban included', () => {
    const everything = {
      title: 't', subtitle: 's', description: 'd', authors: ['a'], publisher: 'p', publishedDate: '2020-01-01', seriesName: 'n', seriesNumber: 1, seriesTotal: 2,
      isbn13: '9780441013593', isbn10: '0441013597', language: 'en', pageCount: 10, categories: ['c'], amazonRating: 4, amazonReviewCount: 3, goodreadsRating: 4,
      goodreadsReviewCount: 5, hardcoverRating: 4, hardcoverReviewCount: 1, doubanRating: 8, doubanReviewCount: 2, ranobedbRating: 3, lubimyczytacRating: 7,
      audibleRating: 4, audibleReviewCount: 9, coverUpdatedOn: '2025-01-01T00:00:00Z',
    };
    expect(computeMatchScore(everything, MATCH_WEIGHT_DEFAULTS)).toBe(100);
  });

  it('follows the weights given, missing ones taking their defaults; all zero gives 0', () => {
    expect(computeMatchScore({ title: 't' }, { ...matchWeights({}), title: 0 })).toBe(0);
    const onlyTitle = Object.fromEntries(Object.keys(MATCH_WEIGHT_DEFAULTS).map((k) => [k, k === 'title' ? 1 : 0]));
    expect(computeMatchScore({ title: 't' }, onlyTitle)).toBe(100);
    expect(computeMatchScore({ title: 't' }, Object.fromEntries(Object.keys(MATCH_WEIGHT_DEFAULTS).map((k) => [k, 0])))).toBe(0);
    expect(matchWeights({ title: 7, bogus: 3, subtitle: 'x' })).toMatchObject({ title: 7, subtitle: 1 });
  });
});

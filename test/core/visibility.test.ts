// Content restrictions as sets (`book.id [not] in (…)`, for queries over many books) and per row (for one book) select
// the same books, for every name restriction and mode, alone and combined; the books hidden by excluded names, collected
// from those names alone, are exactly the others.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERMISSION_NAMES, type Permissions } from '../../src/core/auth/permissions.ts';
import type { ContentRestriction, Principal } from '../../src/core/auth/principal.ts';
import { bookAccessOf, hiddenByExcludedNames, visibleBookFilter } from '../../src/core/auth/visibility.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';

let dir: string;
let store: Store;
let libraryId: number;
const book: Record<string, number> = {};

const noFlags = (): Permissions => Object.fromEntries(PERMISSION_NAMES.map((p) => [p, false])) as Permissions;
const reader = (restrictions: ContentRestriction[]): Principal => ({ userId: 1, username: 'r', isDefaultPassword: false, sessionVersion: 0, permissions: noFlags(), libraryIds: [libraryId], restrictions });

async function visible(principal: Principal, perRow: boolean): Promise<string[]> {
  const rows = await store.db.selectFrom('book').select('book.id').where(visibleBookFilter(principal, { perRow })).orderBy('book.id').execute();
  const names = new Map(Object.entries(book).map(([k, v]) => [v, k]));
  return rows.map(({ id }) => names.get(id) ?? String(id));
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bindery-visibility-'));
  store = await openStore(join(dir, 'catalog.sqlite'));
  await store.db.insertInto('users').values({ username: 'r', password_hash: 'x', name: 'R' }).execute();
  libraryId = await seedLibrary(store.db, dir, 'Books');
  for (const key of ['plain', 'horror', 'romance', 'both', 'tagged', 'moody']) book[key] = (await seedBook(store.db, libraryId, { title: key })).bookId;
  const name = async (table: 'category' | 'tag' | 'mood', value: string): Promise<number> => (await store.db.insertInto(table).values({ name: value }).returning('id').executeTakeFirstOrThrow()).id;
  const horror = await name('category', 'Horror');
  const romance = await name('category', 'Romance');
  const gore = await name('tag', 'Gore');
  const dark = await name('mood', 'Dark');
  await store.db.insertInto('book_metadata_category_mapping').values([
    { book_id: book.horror as number, category_id: horror },
    { book_id: book.romance as number, category_id: romance },
    { book_id: book.both as number, category_id: horror },
    { book_id: book.both as number, category_id: romance },
  ]).execute();
  await store.db.insertInto('book_metadata_tag_mapping').values({ book_id: book.tagged as number, tag_id: gore }).execute();
  await store.db.insertInto('book_metadata_mood_mapping').values({ book_id: book.moody as number, mood_id: dark }).execute();
  await store.db.updateTable('book_metadata').set({ age_rating: 18, content_rating: 'Mature' }).where('book_id', '=', book.horror as number).execute();
  await store.db.updateTable('book_metadata').set({ age_rating: 12, content_rating: 'Teen' }).where('book_id', '=', book.romance as number).execute();
});

afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('content restrictions', () => {
  const cases: [string, ContentRestriction[], string[]][] = [
    ['no restriction', [], ['plain', 'horror', 'romance', 'both', 'tagged', 'moody']],
    ['category excluded (any letter case)', [{ type: 'CATEGORY', mode: 'EXCLUDE', value: 'HORROR' }], ['plain', 'romance', 'tagged', 'moody']],
    ['category allowed only', [{ type: 'CATEGORY', mode: 'ALLOW_ONLY', value: 'romance' }], ['romance', 'both']],
    ['two categories excluded', [{ type: 'CATEGORY', mode: 'EXCLUDE', value: 'horror' }, { type: 'CATEGORY', mode: 'EXCLUDE', value: 'romance' }], ['plain', 'tagged', 'moody']],
    ['tag excluded, mood excluded', [{ type: 'TAG', mode: 'EXCLUDE', value: 'gore' }, { type: 'MOOD', mode: 'EXCLUDE', value: 'dark' }], ['plain', 'horror', 'romance', 'both']],
    ['tag allowed only and category excluded', [{ type: 'TAG', mode: 'ALLOW_ONLY', value: 'gore' }, { type: 'CATEGORY', mode: 'EXCLUDE', value: 'horror' }], ['tagged']],
  ];

  it.each(cases)('%s: the same books as a set and per row', async (_label, restrictions, expected) => {
    const principal = reader(restrictions);
    expect(await visible(principal, false)).toEqual(expected);
    expect(await visible(principal, true)).toEqual(expected);
    for (const [key, id] of Object.entries(book)) expect(await bookAccessOf(store, principal, id), key).toBe(expected.includes(key) ? 'ok' : 'hidden');
  });

  it.each(cases)('%s: the hidden books collected from the excluded names are the ones the filter hides', async (_label, restrictions, expected) => {
    const principal = reader(restrictions);
    const hidden = hiddenByExcludedNames(principal);
    const onlyExcluding = restrictions.length > 0 && restrictions.every((r) => r.mode === 'EXCLUDE');
    expect(hidden !== undefined, 'collected from the names exactly when every restriction excludes names').toBe(onlyExcluding);
    if (!hidden) return;
    const rows = await store.db.selectFrom('book').select('book.id').where(hidden).orderBy('book.id').execute();
    const names = new Map(Object.entries(book).map(([k, v]) => [v, k]));
    expect(rows.map(({ id }) => names.get(id))).toEqual(Object.keys(book).filter((key) => !expected.includes(key)));
  });

  it('collects hidden books from names only when no restriction reads a rating, and ignores the allow-only age rating Grimmory ignores', () => {
    expect(hiddenByExcludedNames(reader([{ type: 'AGE_RATING', mode: 'EXCLUDE', value: '16' }]))).toBeUndefined();
    expect(hiddenByExcludedNames(reader([{ type: 'CATEGORY', mode: 'EXCLUDE', value: 'horror' }, { type: 'CONTENT_RATING', mode: 'EXCLUDE', value: 'mature' }]))).toBeUndefined();
    expect(hiddenByExcludedNames(reader([{ type: 'CATEGORY', mode: 'EXCLUDE', value: 'horror' }, { type: 'AGE_RATING', mode: 'ALLOW_ONLY', value: '16' }]))).toBeDefined();
    expect(hiddenByExcludedNames(reader([]))).toBeUndefined();
  });

  // Unrated books pass an exclusion and fail an allow-only list.
  const ratings: [string, ContentRestriction[], string[]][] = [
    ['age rating 16 and over excluded', [{ type: 'AGE_RATING', mode: 'EXCLUDE', value: '16' }], ['plain', 'romance', 'both', 'tagged', 'moody']],
    ['content rating excluded (any letter case)', [{ type: 'CONTENT_RATING', mode: 'EXCLUDE', value: 'MATURE' }], ['plain', 'romance', 'both', 'tagged', 'moody']],
    ['content rating allowed only', [{ type: 'CONTENT_RATING', mode: 'ALLOW_ONLY', value: 'teen' }], ['romance']],
  ];

  it.each(ratings)('%s: the same books as a list and per book', async (_label, restrictions, expected) => {
    const principal = reader(restrictions);
    expect(await visible(principal, false)).toEqual(expected);
    for (const [key, id] of Object.entries(book)) expect(await bookAccessOf(store, principal, id), key).toBe(expected.includes(key) ? 'ok' : 'hidden');
  });

  it('answers missing for a book that does not exist, for readers and admins alike', async () => {
    expect(await bookAccessOf(store, reader([]), 999_999)).toBe('missing');
  });
});

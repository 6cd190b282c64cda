// Changing authors by hand: the editor (name, description, ASIN and their locks), unmatching, and deleting. None of
// it touches a book file; books that credit a renamed or deleted author get their search text (and, on delete, their
// match score) brought up to date.
import type { Updateable } from 'kysely';
import { kyselyExec } from '../store/sql-exec.ts';
import { refreshSearchText } from '../books/search-text.ts';
import { searchKey } from '../text/search-key.ts';
import { updateMatchScore } from '../metadata/match-scores.ts';
import type { DB } from '../store/db-types.ts';
import type { Db } from '../store/store.ts';
import { AuthorError, authorNotFound } from './author-error.ts';
import { removeAuthorImages } from './author-photos.ts';

/** Grimmory's AuthorUpdateRequest: an absent (or null) field is left as it is. */
export interface AuthorUpdate {
  name?: string | null;
  description?: string | null;
  asin?: string | null;
  nameLocked?: boolean | null;
  descriptionLocked?: boolean | null;
  asinLocked?: boolean | null;
  photoLocked?: boolean | null;
}

/** Grimmory keeps ASINs in a varchar(20). */
export const MAX_ASIN_LENGTH = 20;
const MAX_NAME_LENGTH = 255;

const flag = (v: boolean): number => (v ? 1 : 0);

/**
 * Applies the editor's changes, as Grimmory does: a blank description or ASIN clears it; the locks only keep matching
 * from changing a field, so the editor may still change a locked one. A name must not be blank nor another
 * author's.
 */
export async function updateAuthor(db: Db, authorId: number, update: AuthorUpdate): Promise<void> {
  const changes: Updateable<DB['author']> = {};
  let renamed = false;
  if (typeof update.name === 'string') {
    const name = update.name.trim();
    if (name === '') throw new AuthorError('INVALID', 'name: must not be blank');
    if (name.length > MAX_NAME_LENGTH) throw new AuthorError('INVALID', `name: size must be at most ${MAX_NAME_LENGTH}`);
    changes.name = name;
    changes.name_key = searchKey(name);
  }
  if (typeof update.description === 'string') changes.description = update.description.trim() === '' ? null : update.description;
  if (typeof update.asin === 'string') {
    const asin = update.asin.trim();
    if (asin.length > MAX_ASIN_LENGTH) throw new AuthorError('INVALID', `asin: size must be at most ${MAX_ASIN_LENGTH}`);
    changes.asin = asin === '' ? null : asin;
  }
  if (typeof update.nameLocked === 'boolean') changes.name_locked = flag(update.nameLocked);
  if (typeof update.descriptionLocked === 'boolean') changes.description_locked = flag(update.descriptionLocked);
  if (typeof update.asinLocked === 'boolean') changes.asin_locked = flag(update.asinLocked);
  if (typeof update.photoLocked === 'boolean') changes.photo_locked = flag(update.photoLocked);

  await db.transaction().execute(async (trx) => {
    const current = await trx.selectFrom('author').select(['id', 'name']).where('id', '=', authorId).executeTakeFirst();
    if (!current) throw authorNotFound(authorId);
    if (changes.name !== undefined && changes.name !== current.name) {
      const taken = await trx.selectFrom('author').select('id').where('name', '=', changes.name).where('id', '!=', authorId).executeTakeFirst();
      if (taken) throw new AuthorError('NAME_TAKEN', `Another author is already named "${changes.name}"`);
      renamed = true;
    }
    if (Object.keys(changes).length > 0) await trx.updateTable('author').set(changes).where('id', '=', authorId).execute();
    if (renamed) {
      const bookIds = (await trx.selectFrom('book_metadata_author_mapping').select('book_id').where('author_id', '=', authorId).execute()).map((r) => r.book_id);
      await refreshSearchText(kyselyExec(trx), bookIds);
    }
  });
}

/**
 * Forgets what matching brought: the description, the ASIN and the photo. Unlike Grimmory, a locked field (or a
 * locked photo) is kept, since the lock is there to protect it. Unknown ids are skipped.
 */
export async function unmatchAuthors(db: Db, imagesRoot: string, authorIds: readonly number[]): Promise<number> {
  let done = 0;
  for (const authorId of authorIds) {
    const author = await db.selectFrom('author').select(['description_locked', 'asin_locked', 'photo_locked']).where('id', '=', authorId).executeTakeFirst();
    if (!author) continue;
    const changes: { description?: null; asin?: null } = {};
    if (author.description_locked !== 1) changes.description = null;
    if (author.asin_locked !== 1) changes.asin = null;
    if (Object.keys(changes).length > 0) await db.updateTable('author').set(changes).where('id', '=', authorId).execute();
    if (author.photo_locked !== 1) await removeAuthorImages(imagesRoot, authorId);
    done++;
  }
  return done;
}

/**
 * Deletes authors as Grimmory does: each is taken off every book that credits it, then removed with its photo.
 * The books and their files stay; their search text and match score follow. Unknown ids are skipped.
 */
export async function deleteAuthors(db: Db, imagesRoot: string, authorIds: readonly number[]): Promise<{ deleted: number; books: number[] }> {
  let deleted = 0;
  const touched = new Set<number>();
  for (const authorId of authorIds) {
    const bookIds = await db.transaction().execute(async (trx) => {
      const exists = await trx.selectFrom('author').select('id').where('id', '=', authorId).executeTakeFirst();
      if (!exists) return undefined;
      const books = (await trx.selectFrom('book_metadata_author_mapping').select('book_id').where('author_id', '=', authorId).execute()).map((r) => r.book_id);
      await trx.deleteFrom('book_metadata_author_mapping').where('author_id', '=', authorId).execute();
      await trx.deleteFrom('author').where('id', '=', authorId).execute();
      await refreshSearchText(kyselyExec(trx), books);
      return books;
    });
    if (!bookIds) continue;
    deleted++;
    for (const id of bookIds) touched.add(id);
    await removeAuthorImages(imagesRoot, authorId);
  }
  for (const bookId of touched) await updateMatchScore(db, bookId);
  return { deleted, books: [...touched] };
}

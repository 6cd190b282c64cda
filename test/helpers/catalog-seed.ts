// Puts libraries and books straight into a catalog for route tests that need particular file types or owners.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createLibrary } from '../../src/core/libraries/libraries.ts';
import type { Db } from '../../src/core/store/store.ts';
import { bookSearchText, searchKey } from '../../src/core/text/search-key.ts';

/** A library over a real (empty) folder under `root`. */
export async function seedLibrary(db: Db, root: string, name: string): Promise<number> {
  const folder = join(root, name);
  mkdirSync(folder, { recursive: true });
  return (await createLibrary(db, { name, paths: [folder] })).id;
}

export interface SeedBook {
  title: string;
  /** Book-format files, first one oldest; defaults to one EPUB. */
  types?: string[];
  authors?: string[];
}

/** A book row with metadata, authors and one book_file per type; returns the book id and file ids in order. */
export async function seedBook(db: Db, libraryId: number, book: SeedBook): Promise<{ bookId: number; fileIds: number[] }> {
  const path = await db.selectFrom('library_path').select('id').where('library_id', '=', libraryId).executeTakeFirstOrThrow();
  const { id: bookId } = await db.insertInto('book').values({ library_id: libraryId, library_path_id: path.id }).returning('id').executeTakeFirstOrThrow();
  await db.insertInto('book_metadata').values({ book_id: bookId, title: book.title }).execute();
  const fileIds: number[] = [];
  for (const [i, type] of (book.types ?? ['EPUB']).entries()) {
    const ext = type === 'CBX' ? 'cbz' : type === 'AUDIOBOOK' ? 'm4b' : type.toLowerCase();
    const file = await db
      .insertInto('book_file')
      .values({ book_id: bookId, library_path_id: path.id, file_sub_path: '', file_name: `${book.title}-${bookId}-${i}.${ext}`, book_type: type, file_size_kb: 10 })
      .returning('id')
      .executeTakeFirstOrThrow();
    fileIds.push(file.id);
  }
  for (const [order, name] of (book.authors ?? []).entries()) {
    const existing = await db.selectFrom('author').select('id').where('name', '=', name).executeTakeFirst();
    const authorId = existing?.id ?? (await db.insertInto('author').values({ name, name_key: searchKey(name) }).returning('id').executeTakeFirstOrThrow()).id;
    await db.insertInto('book_metadata_author_mapping').values({ book_id: bookId, author_id: authorId, sort_order: order }).execute();
  }
  // The search text every write path stores.
  await db.updateTable('book_metadata').set({ search_text: bookSearchText({ title: book.title, authors: book.authors ?? [] }) }).where('book_id', '=', bookId).execute();
  return { bookId, fileIds };
}

/**
 * A comic of a series for the Komga page tests: written by `<key> writer` and `shared writer`, with the metadata given
 * (series name and number, published date…) and tags (created as needed); returns the book id.
 */
export async function seedSeriesBook(db: Db, libraryId: number, key: string, title: string, meta: Record<string, unknown>, tags: string[] = []): Promise<number> {
  const { bookId } = await seedBook(db, libraryId, { title, types: ['CBX'], authors: [`${key} writer`, 'shared writer'] });
  if (Object.keys(meta).length > 0) await db.updateTable('book_metadata').set(meta).where('book_id', '=', bookId).execute();
  for (const name of tags) {
    const tag = (await db.selectFrom('tag').select('id').where('name', '=', name).executeTakeFirst())?.id ?? (await db.insertInto('tag').values({ name }).returning('id').executeTakeFirstOrThrow()).id;
    await db.insertInto('book_metadata_tag_mapping').values({ book_id: bookId, tag_id: tag }).execute();
  }
  return bookId;
}

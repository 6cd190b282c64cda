// Reads books out of the catalog for the CLI: one book in the Grimmory `Book` shape, or a compact list.
import { sql } from 'kysely';
import type { Db } from '../store/store.ts';
import { assembleBook, type BookBundle, type BookFileRow, type BookRow, type ComicParts, type Json } from './book-json.ts';

// Other modules import the row serializers from here; they live in book-json.ts with the rest of the Book shape.
export { absoluteFilePath, audiobookJson, bookFileJson, camel, metadataJson, type BookFileRow } from './book-json.ts';

type NameMapping = 'book_metadata_author_mapping' | 'book_metadata_category_mapping' | 'book_metadata_tag_mapping' | 'book_metadata_mood_mapping';

async function namesByBook(db: Db, bookIds: number[], mapping: NameMapping): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  if (bookIds.length === 0) return out;
  let rows: { book_id: number; name: string }[];
  if (mapping === 'book_metadata_author_mapping') {
    rows = await db.selectFrom('book_metadata_author_mapping as m').innerJoin('author as n', 'n.id', 'm.author_id').select(['m.book_id', 'n.name']).where('m.book_id', 'in', bookIds).orderBy('m.book_id').orderBy('m.sort_order').execute();
  } else if (mapping === 'book_metadata_category_mapping') {
    rows = await db.selectFrom('book_metadata_category_mapping as m').innerJoin('category as n', 'n.id', 'm.category_id').select(['m.book_id', 'n.name']).where('m.book_id', 'in', bookIds).orderBy('n.name').execute();
  } else if (mapping === 'book_metadata_tag_mapping') {
    rows = await db.selectFrom('book_metadata_tag_mapping as m').innerJoin('tag as n', 'n.id', 'm.tag_id').select(['m.book_id', 'n.name']).where('m.book_id', 'in', bookIds).orderBy('n.name').execute();
  } else {
    rows = await db.selectFrom('book_metadata_mood_mapping as m').innerJoin('mood as n', 'n.id', 'm.mood_id').select(['m.book_id', 'n.name']).where('m.book_id', 'in', bookIds).orderBy('n.name').execute();
  }
  for (const r of rows) {
    const list = out.get(r.book_id) ?? [];
    list.push(r.name);
    out.set(r.book_id, list);
  }
  return out;
}

async function comicParts(db: Db, bookId: number): Promise<ComicParts | undefined> {
  const row = (await db.selectFrom('comic_metadata').selectAll().where('book_id', '=', bookId).executeTakeFirst()) as Json | undefined;
  if (!row) return undefined;
  const creators = await db.selectFrom('comic_metadata_creator_mapping as m').innerJoin('comic_creator as c', 'c.id', 'm.creator_id').select(['m.role', 'c.name']).where('m.book_id', '=', bookId).orderBy('m.id').execute();
  const names = async (mapping: string, table: string, column: string): Promise<string[]> => {
    const { rows } = await sql<{ name: string }>`select n.name from ${sql.table(mapping)} m join ${sql.table(table)} n on n.id = ${sql.ref(`m.${column}`)} where m.book_id = ${bookId} order by n.name`.execute(db);
    return rows.map((r) => r.name);
  };
  return {
    row,
    creators,
    characters: await names('comic_metadata_character_mapping', 'comic_character', 'character_id'),
    teams: await names('comic_metadata_team_mapping', 'comic_team', 'team_id'),
    locations: await names('comic_metadata_location_mapping', 'comic_location', 'location_id'),
  };
}

/** Full Book JSON (description included, no per-user parts) for one book, or undefined when there is no such book. */
export async function bookJson(db: Db, bookId: number): Promise<Json | undefined> {
  const book: BookRow | undefined = await db
    .selectFrom('book')
    .innerJoin('library', 'library.id', 'book.library_id')
    .select(['book.id', 'book.library_id', 'library.name as library_name', 'library.format_priority', 'book.library_path_id', 'book.added_on', 'book.metadata_match_score', 'book.is_physical', 'book.missing_at'])
    .where('book.id', '=', bookId)
    .executeTakeFirst();
  if (!book) return undefined;
  const metadata = (await db.selectFrom('book_metadata').selectAll().where('book_id', '=', bookId).executeTakeFirst()) as Json | undefined;
  const files = (await db.selectFrom('book_file').selectAll().where('book_id', '=', bookId).orderBy('id').execute()) as unknown as BookFileRow[];
  const roots = new Map((await db.selectFrom('library_path').select(['id', 'path']).where('library_id', '=', book.library_id).execute()).map((r) => [r.id, r.path]));
  const [authors, categories, tags, moods] = await Promise.all([
    namesByBook(db, [bookId], 'book_metadata_author_mapping'),
    namesByBook(db, [bookId], 'book_metadata_category_mapping'),
    namesByBook(db, [bookId], 'book_metadata_tag_mapping'),
    namesByBook(db, [bookId], 'book_metadata_mood_mapping'),
  ]);
  const bundle: BookBundle = {
    book,
    metadata,
    authors: authors.get(bookId) ?? [],
    categories: categories.get(bookId) ?? [],
    tags: tags.get(bookId) ?? [],
    moods: moods.get(bookId) ?? [],
    files,
    comic: await comicParts(db, bookId),
  };
  return assembleBook(bundle, roots, { listView: false, withDescription: true });
}

export interface BookListItem {
  id: number;
  libraryId: number;
  title: string | null;
  authors: string[];
  seriesName: string | null;
  seriesNumber: number | null;
  formats: string[];
  missing: boolean;
}

export async function listBookItems(db: Db, filter: { libraryId?: number; limit?: number; offset?: number } = {}): Promise<BookListItem[]> {
  let q = db
    .selectFrom('book')
    .leftJoin('book_metadata as m', 'm.book_id', 'book.id')
    .select(['book.id', 'book.library_id', 'book.missing_at', 'm.title', 'm.series_name', 'm.series_number'])
    .orderBy('book.id');
  if (filter.libraryId !== undefined) q = q.where('book.library_id', '=', filter.libraryId);
  if (filter.limit !== undefined) q = q.limit(filter.limit).offset(filter.offset ?? 0);
  const rows = await q.execute();
  const ids = rows.map((r) => r.id);
  const authors = new Map<number, string[]>();
  const formats = new Map<number, string[]>();
  for (let i = 0; i < ids.length; i += 500) {
    const chunk = ids.slice(i, i + 500);
    for (const [id, names] of await namesByBook(db, chunk, 'book_metadata_author_mapping')) authors.set(id, names);
    const files = await db.selectFrom('book_file').select(['book_id', 'book_type']).where('book_id', 'in', chunk).where('is_book', '=', 1).orderBy('id').execute();
    for (const f of files) formats.set(f.book_id, [...new Set([...(formats.get(f.book_id) ?? []), f.book_type ?? '?'])]);
  }
  return rows.map((r) => ({
    id: r.id,
    libraryId: r.library_id,
    title: r.title,
    authors: authors.get(r.id) ?? [],
    seriesName: r.series_name,
    seriesNumber: r.series_number,
    formats: formats.get(r.id) ?? [],
    missing: r.missing_at !== null,
  }));
}

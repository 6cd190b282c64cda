// The bulk editor (BulkMetadataUpdateRequest): the same few fields set, merged or cleared on many books, each book on
// its own, with its locks respected.
import { kyselyExec } from '../store/sql-exec.ts';
import type { Db } from '../store/store.ts';
import { applyEdit, parseEdit } from './edit.ts';
import { MetadataEditError } from './metadata-fields.ts';

type Json = Record<string, unknown>;

const CLEAR_FLAGS: [request: string, clearFlag: string][] = [
  ['clearAuthors', 'authors'], ['clearPublisher', 'publisher'], ['clearLanguage', 'language'], ['clearSeriesName', 'seriesName'],
  ['clearSeriesTotal', 'seriesTotal'], ['clearPublishedDate', 'publishedDate'], ['clearGenres', 'categories'], ['clearMoods', 'moods'],
  ['clearTags', 'tags'], ['clearAgeRating', 'ageRating'],
];

export interface BulkEdit {
  bookIds: number[];
  run: (db: Db, bookId: number) => Promise<boolean>;
}

/** Validates the request once; `run` then edits one book and says whether anything changed. */
export function prepareBulkEdit(request: Json): BulkEdit {
  const bookIds = request.bookIds;
  if (bookIds !== undefined && bookIds !== null && (!Array.isArray(bookIds) || bookIds.some((id) => !Number.isInteger(id)))) {
    throw new MetadataEditError('INVALID', 'bookIds: expected an array of book ids');
  }
  const metadata: Json = {
    authors: request.authors,
    publisher: request.publisher,
    language: request.language,
    seriesName: request.seriesName,
    seriesTotal: request.seriesTotal,
    publishedDate: request.publishedDate,
    categories: request.genres ?? request.categories,
    moods: request.moods,
    tags: request.tags,
    ageRating: request.ageRating,
    contentRating: request.contentRating,
  };
  const clearFlags = Object.fromEntries(CLEAR_FLAGS.map(([from, to]) => [to, request[from] === true]));
  const edit = parseEdit(metadata, clearFlags);
  const options = { replaceMode: null, mergeCategories: request.mergeCategories === true, mergeMoods: request.mergeMoods === true, mergeTags: request.mergeTags === true };
  return {
    bookIds: [...new Set((bookIds as number[] | null | undefined) ?? [])],
    run: async (db, bookId) => {
      if (!edit) return false;
      return db.transaction().execute(async (trx) => (await applyEdit(kyselyExec(trx), bookId, edit, options)).changed);
    },
  };
}

// One progress change pushed to a user's Hardcover library, in the steps Grimmory takes: find the book and the
// edition (by Hardcover book id, else slug, else ISBN), turn the percent into pages of that edition, make sure the book
// is on the user's shelf as "currently reading" with that edition, then update the latest read of that edition or start
// a new one. A book already marked read is not touched again by a finished position.
import { asArray, asInt, asString, cleanIsbn, isObject, type Json } from '../metadata/values.ts';
import { HardcoverSyncError, type HardcoverApi } from './hardcover-api.ts';

/** Hardcover's user_book status ids. */
export const STATUS_READING = 2;
export const STATUS_READ = 3;
/** At or above this percent the read is finished (Grimmory's rule). */
export const FINISHED_PERCENT = 99;

export interface BookIdentifiers {
  /** Hardcover's numeric book id (`hardcoverBookId`). */
  hardcoverBookId: string | null;
  /** Hardcover's slug (`hardcoverId`). */
  hardcoverSlug: string | null;
  isbn13: string | null;
  isbn10: string | null;
}

export interface HardcoverEdition {
  bookId: number;
  editionId: number;
  pages: number | null;
}

export type PushOutcome =
  | { status: 'synced'; bookId: number; editionId: number; pages: number; progressPages: number; finished: boolean; read: 'updated' | 'started' }
  | { status: 'skipped'; reason: 'no-identifiers' | 'not-found' | 'no-pages' | 'already-read' };

interface UserBookRead {
  id: number;
  editionId: number | null;
  startedAt: string | null;
  finishedAt: string | null;
}

interface UserBook {
  id: number;
  statusId: number | null;
  editionId: number | null;
  reads: UserBookRead[];
}

const EDITION = 'id pages';
const USER_BOOK = 'id status_id edition_id user_book_reads { id edition_id started_at finished_at progress progress_pages }';

/** The edition filter for the ISBNs that are present, and the variables it uses. */
function isbnFilter(ids: BookIdentifiers): { filter: string; declarations: string; variables: Record<string, string> } | undefined {
  const isbn13 = cleanIsbn(ids.isbn13 ?? undefined);
  const isbn10 = cleanIsbn(ids.isbn10 ?? undefined);
  const parts: string[] = [];
  const declarations: string[] = [];
  const variables: Record<string, string> = {};
  if (isbn13) {
    parts.push('{isbn_13: {_eq: $isbn13}}');
    declarations.push('$isbn13: String!');
    variables.isbn13 = isbn13;
  }
  if (isbn10) {
    parts.push('{isbn_10: {_eq: $isbn10}}');
    declarations.push('$isbn10: String!');
    variables.isbn10 = isbn10;
  }
  if (parts.length === 0) return undefined;
  return { filter: `{_or: [${parts.join(', ')}]}`, declarations: declarations.join(', '), variables };
}

const editionOf = (raw: unknown): { id: number; pages: number | null } | undefined => {
  if (!isObject(raw)) return undefined;
  const id = asInt(raw.id);
  return id === undefined ? undefined : { id, pages: asInt(raw.pages) ?? null };
};

/** The edition to record against a book row: the ISBN's edition, else the default ebook, else the default physical one. */
function pickEdition(book: Json): HardcoverEdition | undefined {
  const bookId = asInt(book.id);
  if (bookId === undefined) return undefined;
  const edition = editionOf(asArray(book.editions)[0]) ?? editionOf(book.default_ebook_edition) ?? editionOf(book.default_physical_edition);
  if (!edition) return undefined;
  return { bookId, editionId: edition.id, pages: edition.pages ?? asInt(book.pages) ?? null };
}

async function bookBy(api: HardcoverApi, where: string, declaration: string, variables: Record<string, unknown>, isbn: ReturnType<typeof isbnFilter>): Promise<HardcoverEdition | undefined> {
  const editions = isbn ? `editions(where: ${isbn.filter}, order_by: {users_count: desc}, limit: 1) { ${EDITION} }` : '';
  const declarations = [declaration, isbn?.declarations].filter(Boolean).join(', ');
  const document = `query BinderyBook(${declarations}) {
  books(where: ${where}, limit: 1) {
    id pages
    default_ebook_edition { ${EDITION} }
    default_physical_edition { ${EDITION} }
    ${editions}
  }
}`;
  const data = await api.call(document, { ...variables, ...(isbn?.variables ?? {}) });
  const book = asArray(data.books)[0];
  return isObject(book) ? pickEdition(book) : undefined;
}

/** Finds the book and edition on Hardcover; undefined when it has none of them. */
export async function findHardcoverEdition(api: HardcoverApi, ids: BookIdentifiers): Promise<HardcoverEdition | undefined> {
  const isbn = isbnFilter(ids);
  const numericId = ids.hardcoverBookId?.trim();
  if (numericId && /^\d{1,9}$/.test(numericId)) {
    const found = await bookBy(api, '{id: {_eq: $bookId}}', '$bookId: Int!', { bookId: Number(numericId) }, isbn);
    if (found) return found;
  }
  const slug = ids.hardcoverSlug?.trim();
  if (slug) {
    const found = await bookBy(api, '{slug: {_eq: $slug}}', '$slug: String!', { slug }, isbn);
    if (found) return found;
  }
  if (!isbn) return undefined;
  // The book whose matching edition most readers have, and that edition.
  const document = `query BinderyBookByIsbn(${isbn.declarations}) {
  books(where: {editions: ${isbn.filter}}, order_by: {editions_aggregate: {max: {users_count: desc}}}, limit: 1) {
    id pages
    editions(where: ${isbn.filter}, order_by: {users_count: desc}, limit: 1) { ${EDITION} }
  }
}`;
  const data = await api.call(document, isbn.variables);
  const book = asArray(data.books)[0];
  if (!isObject(book) || !editionOf(asArray(book.editions)[0])) return undefined;
  return pickEdition(book);
}

function userBookOf(raw: unknown): UserBook | undefined {
  if (!isObject(raw)) return undefined;
  const id = asInt(raw.id);
  if (id === undefined) return undefined;
  const reads = asArray(raw.user_book_reads)
    .filter(isObject)
    .map((r) => ({ id: asInt(r.id), editionId: asInt(r.edition_id) ?? null, startedAt: asString(r.started_at) ?? null, finishedAt: asString(r.finished_at) ?? null }))
    .filter((r): r is UserBookRead => r.id !== undefined);
  return { id, statusId: asInt(raw.status_id) ?? null, editionId: asInt(raw.edition_id) ?? null, reads };
}

/** A mutation's own `error` field (Hardcover reports refusals there, beside `errors`). */
function mutationResult(data: Json, field: string): Json {
  const result = data[field];
  if (!isObject(result)) throw new HardcoverSyncError('UNEXPECTED', `no "${field}" in the answer`);
  const error = asString(result.error);
  if (error) throw new HardcoverSyncError('REFUSED', `${field}: ${error}`);
  return result;
}

async function currentUserBook(api: HardcoverApi, bookId: number): Promise<UserBook | undefined> {
  const data = await api.call(`query BinderyUserBook($bookId: Int!) { me { user_books(where: {book_id: {_eq: $bookId}}) { ${USER_BOOK} } } }`, { bookId });
  // `me` is a list of one.
  const me = Array.isArray(data.me) ? data.me[0] : data.me;
  return isObject(me) ? userBookOf(asArray(me.user_books)[0]) : undefined;
}

async function addUserBook(api: HardcoverApi, edition: HardcoverEdition): Promise<UserBook> {
  const data = await api.call(`mutation BinderyAddUserBook($object: UserBookCreateInput!) { insert_user_book(object: $object) { error user_book { ${USER_BOOK} } } }`, {
    object: { book_id: edition.bookId, edition_id: edition.editionId, status_id: STATUS_READING },
  });
  const added = userBookOf(mutationResult(data, 'insert_user_book').user_book);
  if (!added) throw new HardcoverSyncError('UNEXPECTED', 'insert_user_book returned no user_book');
  return added;
}

/** Back to "currently reading" with this edition (Hardcover starts a new read when the status changes). */
async function resumeUserBook(api: HardcoverApi, userBookId: number, editionId: number): Promise<UserBook> {
  const data = await api.call(`mutation BinderyResumeUserBook($id: Int!, $object: UserBookUpdateInput!) { update_user_book(id: $id, object: $object) { id error user_book { ${USER_BOOK} } } }`, {
    id: userBookId,
    object: { edition_id: editionId, status_id: STATUS_READING },
  });
  const updated = userBookOf(mutationResult(data, 'update_user_book').user_book);
  if (!updated) throw new HardcoverSyncError('UNEXPECTED', 'update_user_book returned no user_book');
  return updated;
}

/**
 * Pushes `percent` (0..100) of the book to the user's Hardcover library. `today` is the local date (YYYY-MM-DD)
 * written as the start or finish of a read.
 */
export async function pushProgress(api: HardcoverApi, ids: BookIdentifiers, percent: number, today: string): Promise<PushOutcome> {
  if (!ids.hardcoverBookId?.trim() && !ids.hardcoverSlug?.trim() && !cleanIsbn(ids.isbn13 ?? undefined) && !cleanIsbn(ids.isbn10 ?? undefined)) {
    return { status: 'skipped', reason: 'no-identifiers' };
  }
  const edition = await findHardcoverEdition(api, ids);
  if (!edition) return { status: 'skipped', reason: 'not-found' };
  if (!edition.pages || edition.pages <= 0) return { status: 'skipped', reason: 'no-pages' };
  const pages = edition.pages;
  const progressPages = Math.min(pages, Math.max(0, Math.round((percent / 100) * pages)));
  const finished = percent >= FINISHED_PERCENT;

  let userBook = await currentUserBook(api, edition.bookId);
  if (!userBook) userBook = await addUserBook(api, edition);
  else if (userBook.statusId === STATUS_READ && finished) return { status: 'skipped', reason: 'already-read' };
  else if (userBook.statusId !== STATUS_READING || userBook.editionId !== edition.editionId) userBook = await resumeUserBook(api, userBook.id, edition.editionId);

  const latest = userBook.reads.reduce<UserBookRead | undefined>((a, b) => (a === undefined || b.id > a.id ? b : a), undefined);
  if (userBook.statusId === STATUS_READING && latest && (latest.editionId === null || latest.editionId === edition.editionId)) {
    const data = await api.call(`mutation BinderyUpdateRead($id: Int!, $object: DatesReadInput!) { update_user_book_read(id: $id, object: $object) { id error } }`, {
      id: latest.id,
      object: {
        edition_id: latest.editionId ?? edition.editionId,
        started_at: latest.startedAt ?? today,
        progress_pages: progressPages,
        ...(finished ? { finished_at: today } : latest.finishedAt ? { finished_at: latest.finishedAt } : {}),
      },
    });
    mutationResult(data, 'update_user_book_read');
    return { status: 'synced', bookId: edition.bookId, editionId: edition.editionId, pages, progressPages, finished, read: 'updated' };
  }

  const data = await api.call(`mutation BinderyStartRead($userBookId: Int!, $read: DatesReadInput!) { insert_user_book_read(user_book_id: $userBookId, user_book_read: $read) { error user_book_read { id } } }`, {
    userBookId: userBook.id,
    read: { edition_id: edition.editionId, started_at: today, progress_pages: progressPages, ...(finished ? { finished_at: today } : {}) },
  });
  mutationResult(data, 'insert_user_book_read');
  return { status: 'synced', bookId: edition.bookId, editionId: edition.editionId, pages, progressPages, finished, read: 'started' };
}

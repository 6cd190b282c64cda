// Reads one library's books as compact rows (three plain queries) and groups them.
import type { Principal } from '../auth/principal.ts';
import { isAdmin } from '../auth/principal.ts';
import { visibleBookFilter } from '../auth/visibility.ts';
import type { BookFileType } from '../formats/types.ts';
import { BOOK_FILE_TYPES } from '../formats/types.ts';
import type { Store } from '../store/store.ts';
import { groupDuplicates, MATCH_REASONS, type CandidateBook, type DuplicateGroupIds, type MatchReason } from './detect.ts';

/** `DuplicateDetectionRequest`, plus `matchByContent` (not in Grimmory; see docs/duplicates.md). */
export interface DuplicateRequest {
  libraryId: number;
  matchByIsbn?: boolean;
  matchByExternalId?: boolean;
  matchByTitleAuthor?: boolean;
  matchByDirectory?: boolean;
  matchByFilename?: boolean;
  /** Identical file content (same SHA-256). Defaults to on whenever any other strategy is on. */
  matchByContent?: boolean;
}

export function strategiesOf(request: DuplicateRequest): Set<MatchReason> {
  const out = new Set<MatchReason>();
  if (request.matchByIsbn) out.add('ISBN');
  if (request.matchByExternalId) out.add('EXTERNAL_ID');
  if (request.matchByTitleAuthor) out.add('TITLE_AUTHOR');
  if (request.matchByDirectory) out.add('DIRECTORY');
  if (request.matchByFilename) out.add('FILENAME');
  if (request.matchByContent ?? out.size > 0) out.add('IDENTICAL_CONTENT');
  return out;
}

function parsePriority(json: string | null | undefined): BookFileType[] | null {
  if (!json) return null;
  try {
    const list = JSON.parse(json) as unknown;
    return Array.isArray(list) ? list.filter((f): f is BookFileType => (BOOK_FILE_TYPES as readonly string[]).includes(f)) : null;
  } catch {
    return null;
  }
}

type BookTuple = [number, number | null, number | null, string | null, string | null, string | null, string | null, string | null, string | null, string | null, string | null, string | null, number | null];
type FileTuple = [number, number, string | null, number, number | null, string, string, number, string | null];

/**
 * Compact rows for every (not deleted) book of the library, in id order; `visible` limits them to those ids.
 * Synchronous raw statements: at 100,000 books this is most of the work, and objects are built only once.
 */
export function loadCandidates(store: Store, libraryId: number, visible?: ReadonlySet<number>): CandidateBook[] {
  const { sqlite } = store;
  const books: CandidateBook[] = [];
  const index = new Map<number, CandidateBook>();
  const bookRows = sqlite
    .prepare(
      `select b.id, b.library_path_id, b.metadata_match_score, m.title, m.isbn_13, m.isbn_10, m.goodreads_id, m.hardcover_id,
              m.google_id, m.asin, m.audible_id, m.comicvine_id, m.series_number
         from book b left join book_metadata m on m.book_id = b.id
        where b.library_id = ? and b.deleted = 0 order by b.id`,
    )
    .raw(true)
    .iterate(libraryId) as IterableIterator<BookTuple>;
  for (const r of bookRows) {
    if (visible && !visible.has(r[0])) continue;
    const book: CandidateBook = {
      id: r[0], libraryPathId: r[1], metadataMatchScore: r[2], title: r[3], isbn13: r[4], isbn10: r[5], goodreadsId: r[6],
      hardcoverId: r[7], googleId: r[8], asin: r[9], audibleId: r[10], comicvineId: r[11], seriesNumber: r[12], authors: [], files: [],
    };
    books.push(book);
    index.set(book.id, book);
  }
  if (books.length === 0) return books;

  const authorRows = sqlite
    .prepare(
      `select am.book_id, a.name from book_metadata_author_mapping am join author a on a.id = am.author_id
        join book b on b.id = am.book_id where b.library_id = ? and b.deleted = 0 order by am.book_id, am.sort_order`,
    )
    .raw(true)
    .iterate(libraryId) as IterableIterator<[number, string]>;
  for (const [bookId, name] of authorRows) index.get(bookId)?.authors.push(name);

  const fileRows = sqlite
    .prepare(
      `select f.book_id, f.id, f.book_type, f.is_book, f.library_path_id, f.file_sub_path, f.file_name, f.is_folder_based, f.content_hash
         from book_file f join book b on b.id = f.book_id where b.library_id = ? and b.deleted = 0 order by f.id`,
    )
    .raw(true)
    .iterate(libraryId) as IterableIterator<FileTuple>;
  for (const r of fileRows) {
    index.get(r[0])?.files.push({ id: r[1], bookType: r[2], isBook: r[3] === 1, libraryPathId: r[4], subPath: r[5], fileName: r[6], folderBased: r[7] === 1, contentHash: r[8] });
  }
  return books;
}

/** Ids of the library's books the principal may see; undefined when they see them all (admins). */
export async function visibleBookIds(store: Store, libraryId: number, principal: Principal | undefined): Promise<Set<number> | undefined> {
  if (!principal || isAdmin(principal)) return undefined;
  const rows = await store.db.selectFrom('book').select('book.id').where('book.library_id', '=', libraryId).where(visibleBookFilter(principal)).execute();
  return new Set(rows.map((r) => r.id));
}

export interface FoundDuplicates {
  libraryId: number;
  strategies: MatchReason[];
  groups: DuplicateGroupIds[];
  /** The compact rows of the books in `groups` (titles, authors, files), for callers that print them. */
  books: Map<number, CandidateBook>;
  /** Books looked at. */
  scanned: number;
}

/**
 * Duplicate groups of one library. Without a principal every book is considered (the CLI); with one, only the books
 * that principal may see, so groups never reveal hidden books. An unknown library gives no groups (as in Grimmory).
 */
export async function findDuplicates(store: Store, request: DuplicateRequest, principal?: Principal): Promise<FoundDuplicates> {
  const strategies = strategiesOf(request);
  const order = MATCH_REASONS.filter((r) => strategies.has(r));
  const library = await store.db.selectFrom('library').select(['id', 'format_priority']).where('id', '=', request.libraryId).executeTakeFirst();
  if (!library || strategies.size === 0) return { libraryId: request.libraryId, strategies: order, groups: [], books: new Map(), scanned: 0 };
  const visible = await visibleBookIds(store, library.id, principal);
  const books = loadCandidates(store, library.id, visible);
  if (books.length < 2) return { libraryId: library.id, strategies: order, groups: [], books: new Map(), scanned: books.length };
  const groups = groupDuplicates(books, { strategies, formatPriority: parsePriority(library.format_priority) });
  const inGroups = new Set(groups.flatMap((g) => g.bookIds));
  const details = new Map(books.filter((b) => inGroups.has(b.id)).map((b) => [b.id, b]));
  return { libraryId: library.id, strategies: order, groups, books: details, scanned: books.length };
}

/** The reasons Grimmory's web UI has texts for (its duplicate merger translates `reason.<value>`). */
export type GrimmoryMatchReason = Exclude<MatchReason, 'IDENTICAL_CONTENT'>;
const GRIMMORY_REASONS = MATCH_REASONS.filter((r): r is GrimmoryMatchReason => r !== 'IDENTICAL_CONTENT');

/**
 * A reason the web UI can show for a group. An identical-content group is labelled with the first of Grimmory's own
 * strategies that would also put all of its books together (copies of one file usually share ISBN or title and
 * author); when none does, with `EXTERNAL_ID`, the file's SHA-256 being the identifier the books share.
 */
export function displayReason(group: DuplicateGroupIds, books: ReadonlyMap<number, CandidateBook>): GrimmoryMatchReason {
  if (group.matchReason !== 'IDENTICAL_CONTENT') return group.matchReason;
  const members = group.bookIds.map((id) => books.get(id)).filter((b): b is CandidateBook => b !== undefined);
  for (const reason of GRIMMORY_REASONS) {
    const [together] = groupDuplicates(members, { strategies: new Set([reason]), formatPriority: null });
    if (together && together.bookIds.length === members.length) return reason;
  }
  return 'EXTERNAL_ID';
}

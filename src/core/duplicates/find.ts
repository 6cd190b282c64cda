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

interface BookRow {
  id: number; library_path_id: number | null; metadata_match_score: number | null; title: string | null; isbn_13: string | null; isbn_10: string | null;
  goodreads_id: string | null; hardcover_id: string | null; google_id: string | null; asin: string | null; audible_id: string | null;
  comicvine_id: string | null; series_number: number | null;
}
interface FileRow {
  book_id: number; id: number; book_type: string | null; is_book: number; library_path_id: number | null; file_sub_path: string; file_name: string;
  is_folder_based: number; content_hash: string | null;
}

const CANDIDATE_PAGE = 5000;

/**
 * Compact rows for every (not deleted) book of the library, in id order; `visible` limits them to those ids. Read in
 * pages of books (with their authors and files) inside one snapshot, so a large library never holds all of its rows as
 * query results at once.
 */
export async function loadCandidates(store: Store, libraryId: number, visible?: ReadonlySet<number>): Promise<CandidateBook[]> {
  const books: CandidateBook[] = [];
  await store.read(async ({ exec }) => {
    for (let after = 0; ; ) {
      const bookRows = (await exec.all(
        `select b.id, b.library_path_id, b.metadata_match_score, m.title, m.isbn_13, m.isbn_10, m.goodreads_id, m.hardcover_id,
                m.google_id, m.asin, m.audible_id, m.comicvine_id, m.series_number
           from book b left join book_metadata m on m.book_id = b.id
          where b.library_id = ? and b.deleted = 0 and b.id > ? order by b.id limit ${CANDIDATE_PAGE}`,
        [libraryId, after],
      )) as unknown as BookRow[];
      if (bookRows.length === 0) break;
      const first = (bookRows[0] as BookRow).id;
      const last = (bookRows[bookRows.length - 1] as BookRow).id;
      const index = new Map<number, CandidateBook>();
      for (const r of bookRows) {
        if (visible && !visible.has(r.id)) continue;
        const book: CandidateBook = {
          id: r.id, libraryPathId: r.library_path_id, metadataMatchScore: r.metadata_match_score, title: r.title, isbn13: r.isbn_13, isbn10: r.isbn_10,
          goodreadsId: r.goodreads_id, hardcoverId: r.hardcover_id, googleId: r.google_id, asin: r.asin, audibleId: r.audible_id, comicvineId: r.comicvine_id,
          seriesNumber: r.series_number, authors: [], files: [],
        };
        books.push(book);
        index.set(book.id, book);
      }
      if (index.size > 0) {
        const authorRows = await exec.all(
          `select am.book_id, a.name from book_metadata_author_mapping am join author a on a.id = am.author_id
             join book b on b.id = am.book_id
            where b.library_id = ? and b.deleted = 0 and am.book_id between ? and ? order by am.book_id, am.sort_order`,
          [libraryId, first, last],
        );
        for (const r of authorRows) index.get(r.book_id as number)?.authors.push(r.name as string);
        const fileRows = (await exec.all(
          `select f.book_id, f.id, f.book_type, f.is_book, f.library_path_id, f.file_sub_path, f.file_name, f.is_folder_based, f.content_hash
             from book_file f join book b on b.id = f.book_id
            where b.library_id = ? and b.deleted = 0 and f.book_id between ? and ? order by f.id`,
          [libraryId, first, last],
        )) as unknown as FileRow[];
        for (const r of fileRows) {
          index.get(r.book_id)?.files.push({
            id: r.id, bookType: r.book_type as BookFileType | null, isBook: r.is_book === 1, libraryPathId: r.library_path_id as number, subPath: r.file_sub_path,
            fileName: r.file_name, folderBased: r.is_folder_based === 1, contentHash: r.content_hash,
          });
        }
      }
      if (bookRows.length < CANDIDATE_PAGE) break;
      after = last;
    }
  });
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
  const books = await loadCandidates(store, library.id, visible);
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

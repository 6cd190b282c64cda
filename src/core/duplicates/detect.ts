// Duplicate groups in one pass per strategy over compact rows, with hash maps and union-find (never pairwise).
import type { BookFileType } from '../formats/types.ts';
import { DEFAULT_FORMAT_PRIORITY } from '../libraries/libraries.ts';
import { externalIdKeys, isbnKey, normalizeAuthor, normalizeFileName, normalizeTitle } from './normalize.ts';

/** Strategies in the order they run; a book placed in a group is skipped by every later strategy. */
export const MATCH_REASONS = ['IDENTICAL_CONTENT', 'ISBN', 'EXTERNAL_ID', 'TITLE_AUTHOR', 'DIRECTORY', 'FILENAME'] as const;
export type MatchReason = (typeof MATCH_REASONS)[number];

export interface CandidateFile {
  id: number;
  bookType: string | null;
  isBook: boolean;
  libraryPathId: number | null;
  subPath: string;
  fileName: string;
  folderBased: boolean;
  contentHash: string | null;
}

export interface CandidateBook {
  id: number;
  libraryPathId: number | null;
  metadataMatchScore: number | null;
  title: string | null;
  isbn13: string | null;
  isbn10: string | null;
  goodreadsId: string | null;
  hardcoverId: string | null;
  googleId: string | null;
  asin: string | null;
  audibleId: string | null;
  comicvineId: string | null;
  seriesNumber: number | null;
  authors: string[];
  /** Every file of the book, in id order. */
  files: CandidateFile[];
}

export interface DuplicateGroupIds {
  matchReason: MatchReason;
  suggestedTargetBookId: number;
  /** Ascending. */
  bookIds: number[];
}

class UnionFind {
  readonly parent: Int32Array;
  constructor(size: number) {
    this.parent = new Int32Array(size);
    for (let i = 0; i < size; i++) this.parent[i] = i;
  }
  find(x: number): number {
    const p = this.parent;
    let root = x;
    while (p[root] !== root) root = p[root] as number;
    while (p[x] !== root) {
      const next = p[x] as number;
      p[x] = root;
      x = next;
    }
    return root;
  }
  union(a: number, b: number): void {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra !== rb) this.parent[Math.max(ra, rb)] = Math.min(ra, rb);
  }
}

/** Higher is better: the library's format order (or the default), so the best format scores `length - index`. */
function formatScore(book: CandidateBook, priority: readonly string[]): number {
  let best = 0;
  for (const f of book.files) {
    if (!f.isBook || f.bookType === null) continue;
    const i = priority.indexOf(f.bookType);
    if (i >= 0) best = Math.max(best, priority.length - i);
  }
  return best;
}

function bookFileCount(book: CandidateBook): number {
  let n = 0;
  for (const f of book.files) if (f.isBook) n++;
  return n;
}

/** The book to merge into: best format, then most book files, then best metadata match score, then lowest id. */
export function suggestTarget(books: readonly CandidateBook[], formatPriority: readonly BookFileType[] | null): number {
  const priority = formatPriority && formatPriority.length > 0 ? formatPriority : DEFAULT_FORMAT_PRIORITY;
  let best: CandidateBook | undefined;
  let bestKey: [number, number, number] = [0, 0, 0];
  for (const b of books) {
    const key: [number, number, number] = [formatScore(b, priority), bookFileCount(b), b.metadataMatchScore ?? 0];
    const better = best === undefined || key[0] > bestKey[0] || (key[0] === bestKey[0] && (key[1] > bestKey[1] || (key[1] === bestKey[1] && (key[2] > bestKey[2] || (key[2] === bestKey[2] && b.id < best!.id)))));
    if (better) {
      best = b;
      bestKey = key;
    }
  }
  if (!best) throw new Error('suggestTarget needs at least one book');
  return best.id;
}

/** The file Grimmory's DIRECTORY and FILENAME strategies look at: the first book-format file. */
function firstBookFile(book: CandidateBook): CandidateFile | undefined {
  return book.files.find((f) => f.isBook);
}

function isSortedById(books: readonly CandidateBook[]): boolean {
  for (let i = 1; i < books.length; i++) if ((books[i] as CandidateBook).id < (books[i - 1] as CandidateBook).id) return false;
  return true;
}

export interface GroupOptions {
  strategies: ReadonlySet<MatchReason>;
  formatPriority: readonly BookFileType[] | null;
}

/** Groups of at least two books, strategy by strategy in MATCH_REASONS order; groups ordered by their lowest book id. */
export function groupDuplicates(input: readonly CandidateBook[], options: GroupOptions): DuplicateGroupIds[] {
  const books = isSortedById(input) ? input : [...input].sort((a, b) => a.id - b.id);
  const grouped = new Uint8Array(books.length);
  const out: DuplicateGroupIds[] = [];

  const emit = (reason: MatchReason, buckets: Iterable<number[]>): void => {
    const found: number[][] = [];
    for (const members of buckets) if (members.length >= 2) found.push(members);
    found.sort((a, b) => (books[a[0] as number] as CandidateBook).id - (books[b[0] as number] as CandidateBook).id);
    for (const members of found) {
      for (const i of members) grouped[i] = 1;
      const list = members.map((i) => books[i] as CandidateBook);
      out.push({ matchReason: reason, suggestedTargetBookId: suggestTarget(list, options.formatPriority), bookIds: list.map((b) => b.id) });
    }
  };

  /** Books sharing any key end up together (transitively). `keysOf` fills `keys` with the book's keys. */
  const byUnion = (keysOf: (book: CandidateBook, keys: string[]) => void): number[][] => {
    const uf = new UnionFind(books.length);
    const firstWithKey = new Map<string, number>();
    const keys: string[] = [];
    for (let i = 0; i < books.length; i++) {
      if (grouped[i]) continue;
      keys.length = 0;
      keysOf(books[i] as CandidateBook, keys);
      for (const key of keys) {
        const seen = firstWithKey.get(key);
        if (seen === undefined) firstWithKey.set(key, i);
        else uf.union(seen, i);
      }
    }
    return components(uf);
  };

  /** Books with the same single key end up together. */
  const byKey = (keyOf: (book: CandidateBook) => string | undefined): number[][] => {
    const buckets = new Map<string, number[]>();
    for (let i = 0; i < books.length; i++) {
      if (grouped[i]) continue;
      const key = keyOf(books[i] as CandidateBook);
      if (!key) continue;
      const list = buckets.get(key);
      if (list) list.push(i);
      else buckets.set(key, [i]);
    }
    return [...buckets.values()];
  };

  /** Members of every union-find set with more than one book, in input order. */
  const components = (uf: UnionFind): number[][] => {
    const members = new Map<number, number[]>();
    for (let i = 0; i < books.length; i++) {
      if (grouped[i]) continue;
      const root = uf.find(i);
      // A root is its set's lowest index, so it comes first; a list starts only once a second member shows up.
      if (root === i) continue;
      let list = members.get(root);
      if (!list) {
        list = [root];
        members.set(root, list);
      }
      list.push(i);
    }
    return [...members.values()];
  };

  for (const reason of MATCH_REASONS) {
    if (!options.strategies.has(reason)) continue;
    switch (reason) {
      case 'IDENTICAL_CONTENT':
        emit(reason, byUnion((b, keys) => {
          for (const f of b.files) if (f.isBook && f.contentHash) keys.push(f.contentHash);
        }));
        break;
      case 'ISBN':
        emit(reason, byKey((b) => isbnKey(b.isbn13, b.isbn10) || undefined));
        break;
      case 'EXTERNAL_ID':
        emit(reason, byUnion((b, keys) => {
          keys.push(...externalIdKeys({ goodreads: b.goodreadsId, hardcover: b.hardcoverId, google: b.googleId, asin: b.asin, audible: b.audibleId, comicvine: b.comicvineId }));
        }));
        break;
      case 'TITLE_AUTHOR':
        emit(reason, titleAuthorGroups(books, grouped));
        break;
      case 'DIRECTORY':
        emit(reason, byKey((b) => {
          const f = firstBookFile(b);
          if (!f || f.subPath.trim() === '') return undefined;
          const root = f.libraryPathId ?? b.libraryPathId;
          return root === null ? undefined : `${root}:${f.subPath}`;
        }));
        break;
      case 'FILENAME':
        emit(reason, byKey((b) => {
          const f = firstBookFile(b);
          return f ? normalizeFileName(f.fileName, f.folderBased) || undefined : undefined;
        }));
        break;
    }
  }
  return out;
}

/**
 * Same normalized title and at least one normalized author in common (transitively); books without authors are left out.
 * When books of one title carry different series numbers ("Foundation: Book 1" / "Foundation: Book 2" both become
 * "foundation"), only books with the same number (or both without one) are matched.
 */
function titleAuthorGroups(books: readonly CandidateBook[], grouped: Uint8Array): number[][] {
  const authorKeys = new Map<string, string>();
  const normAuthor = (name: string): string => {
    let key = authorKeys.get(name);
    if (key === undefined) {
      key = normalizeAuthor(name);
      authorKeys.set(name, key);
    }
    return key;
  };
  const byTitle = new Map<string, number[]>();
  for (let i = 0; i < books.length; i++) {
    const b = books[i] as CandidateBook;
    if (grouped[i] || b.authors.length === 0) continue;
    const title = normalizeTitle(b.title);
    if (title === '') continue;
    const list = byTitle.get(title);
    if (list) list.push(i);
    else byTitle.set(title, [i]);
  }
  const out: number[][] = [];
  for (const members of byTitle.values()) {
    if (members.length < 2) continue;
    const numbers = new Set<number>();
    for (const i of members) {
      const n = (books[i] as CandidateBook).seriesNumber;
      if (n !== null) numbers.add(n);
    }
    const partitions = new Map<string, number[]>();
    for (const i of members) {
      const n = (books[i] as CandidateBook).seriesNumber;
      const part = numbers.size > 1 ? (n === null ? '-' : String(n)) : '';
      const list = partitions.get(part);
      if (list) list.push(i);
      else partitions.set(part, [i]);
    }
    for (const part of partitions.values()) {
      if (part.length < 2) continue;
      // Union-find over the partition, keyed by author: each author links the books that share it.
      const parent = new Map<number, number>(part.map((i) => [i, i]));
      const find = (x: number): number => {
        let r = x;
        while (parent.get(r) !== r) r = parent.get(r) as number;
        parent.set(x, r);
        return r;
      };
      const firstWithAuthor = new Map<string, number>();
      for (const i of part) {
        for (const name of (books[i] as CandidateBook).authors) {
          const key = normAuthor(name);
          if (key === '') continue;
          const seen = firstWithAuthor.get(key);
          if (seen === undefined) firstWithAuthor.set(key, i);
          else {
            const ra = find(seen);
            const rb = find(i);
            if (ra !== rb) parent.set(Math.max(ra, rb), Math.min(ra, rb));
          }
        }
      }
      const sub = new Map<number, number[]>();
      for (const i of part) {
        const r = find(i);
        const list = sub.get(r);
        if (list) list.push(i);
        else sub.set(r, [i]);
      }
      for (const list of sub.values()) if (list.length >= 2) out.push(list);
    }
  }
  return out;
}

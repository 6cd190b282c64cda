import { copyFileSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/core/auth/principal.ts';
import { allPermissions, permissionsFromRow } from '../../src/core/auth/permissions.ts';
import { groupDuplicates, MATCH_REASONS, suggestTarget, type CandidateBook, type CandidateFile, type MatchReason } from '../../src/core/duplicates/detect.ts';
import { findDuplicates, strategiesOf } from '../../src/core/duplicates/find.ts';
import { attachBookFiles, detachBookFile, listBookFiles, MergeError } from '../../src/core/duplicates/merge.ts';
import { externalIdKeys, foldDiacritics, isbn10To13, isbnKey, normalizeAuthor, normalizeFileName, normalizeTitle } from '../../src/core/duplicates/normalize.ts';
import { createLibrary, type Library } from '../../src/core/libraries/libraries.ts';
import { scanLibrary } from '../../src/core/scan/scanner.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

describe('title normalisation', () => {
  it.each([
    ['The Hobbit', 'hobbit'],
    ['Hobbit', 'hobbit'],
    ['THE HOBBIT', 'hobbit'],
    ['The Hobbit: or There and Back Again', 'hobbit'],
    ['The Hobbit - or There and Back Again', 'hobbit'],
    ['The Hobbit – or There and Back Again', 'hobbit'],
    ['The Hobbit (Illustrated Edition)', 'hobbit'],
    ['The Hobbit [Unabridged] (Middle-earth #0)', 'hobbit'],
    ['A Game of Thrones', 'game of thrones'],
    ['An Instance of the Fingerpost', 'instance of the fingerpost'],
    ['Le Petit Prince', 'petit prince'],
    ['La Peste', 'peste'],
    ['Les Misérables', 'miserables'],
    ["L'Étranger", 'etranger'],
    ['L’Étranger', 'etranger'],
    ['Der Prozess', 'prozess'],
    ['Die Verwandlung', 'verwandlung'],
    ['Das Parfum', 'parfum'],
    ['El Aleph', 'aleph'],
    ['Los de abajo', 'de abajo'],
    ['Il nome della rosa', 'nome della rosa'],
    ['Cien años de soledad', 'cien anos de soledad'],
    ['Pride & Prejudice', 'pride and prejudice'],
    ['Pride and Prejudice', 'pride and prejudice'],
    ["Don't Panic", 'dont panic'],
    ['Spider-Man', 'spider man'],
    ['10:04', '10 04'],
    ['I, Robot', 'i robot'],
    ['The', 'the'],
    ['A', 'a'],
    ['Ærøskøbing', 'aeroskobing'],
    ['Straße', 'strasse'],
    ['  Dune  ', 'dune'],
    [': Dune', 'dune'],
    ['', ''],
  ])('%j → %j', (input, expected) => {
    expect(normalizeTitle(input)).toBe(expected);
  });

  it('treats null and undefined as empty', () => {
    expect(normalizeTitle(null)).toBe('');
    expect(normalizeTitle(undefined)).toBe('');
  });

  it('folds diacritics and letters NFD leaves alone', () => {
    expect(foldDiacritics('Émile Zoła, Søren, Œuvre, Đorđe')).toBe('Emile Zola, Soren, OEuvre, Dorde');
  });
});

describe('author normalisation', () => {
  it('ignores name order, initials spacing and dots', () => {
    const key = normalizeAuthor('J. R. R. Tolkien');
    for (const spelling of ['Tolkien, J. R. R.', 'J.R.R. Tolkien', 'J. R. R. Tolkien', 'Tolkien, J.R.R.', 'JRR Tolkien', 'j.r.r. tolkien', 'Tolkien J R R']) {
      expect(normalizeAuthor(spelling), spelling).toBe(key);
    }
    expect(key).toBe('j r r tolkien');
  });

  it.each([
    ['King, Stephen', 'Stephen King'],
    ['Gabriel García Márquez', 'Gabriel Garcia Marquez'],
    ['Martin Luther King, Jr.', 'Martin Luther King'],
    ['Jean-Paul Sartre', 'Jean Paul Sartre'],
    ['C.S. Lewis', 'CS Lewis'],
    ['Lewis, C. S.', 'C. S. Lewis'],
    ['STEPHEN KING', 'Stephen King'],
    ['Brontë, Charlotte', 'Charlotte Bronte'],
    ["O'Brian, Patrick", 'Patrick OBrian'],
  ])('%j = %j', (a, b) => {
    expect(normalizeAuthor(a)).toBe(normalizeAuthor(b));
  });

  it('keeps different people apart', () => {
    expect(normalizeAuthor('Stephen King')).not.toBe(normalizeAuthor('Stephen Kingsley'));
    expect(normalizeAuthor('Anne Brontë')).not.toBe(normalizeAuthor('Charlotte Brontë'));
    expect(normalizeAuthor('')).toBe('');
    expect(normalizeAuthor(null)).toBe('');
  });
});

describe('ISBN, external id and file name keys', () => {
  it('converts ISBN-10 to ISBN-13 with a valid check digit', () => {
    expect(isbn10To13('0306406152')).toBe('9780306406157');
    expect(isbn10To13('080442957X')).toBe('9780804429573');
    expect(isbn10To13('12345')).toBeUndefined();
    // A body whose weighted sum is a multiple of ten gets check digit 0 (13 digits, not "10").
    for (let n = 0; n < 200; n++) {
      const ten = String(100000000 + n * 7919).padStart(9, '0') + '0';
      const thirteen = isbn10To13(ten) as string;
      expect(thirteen).toMatch(/^\d{13}$/);
      const sum = [...thirteen].reduce((s, d, i) => s + Number(d) * (i % 2 === 0 ? 1 : 3), 0);
      expect(sum % 10).toBe(0);
    }
  });

  it('prefers ISBN-13, falls back to a converted ISBN-10, ignores hyphens', () => {
    expect(isbnKey('978-0-306-40615-7', null)).toBe('9780306406157');
    expect(isbnKey(null, '0-306-40615-2')).toBe('9780306406157');
    expect(isbnKey('', '0306406152')).toBe('9780306406157');
    expect(isbnKey('0306406152', null)).toBe('9780306406157');
    expect(isbnKey(' 9780306406157 ', '1111111111')).toBe('9780306406157');
    expect(isbnKey(null, null)).toBe('');
    expect(isbnKey('  ', 'junk')).toBe('');
    expect(isbnKey('N/A', null)).toBe('');
    expect(isbnKey('N/A', '0306406152')).toBe('9780306406157');
    expect(isbnKey('12345', null)).toBe('');
  });

  it('prefixes external ids by source', () => {
    expect(externalIdKeys({ goodreads: ' 123 ', asin: 'b00abc', google: '', hardcover: null })).toEqual(['goodreads:123', 'asin:B00ABC']);
  });

  it.each([
    ['Dune.epub', 'dune'],
    ['Dune_-_Frank-Herbert (2005).epub', 'dune frank herbert 2005'],
    ['DUNE.pdf', 'dune'],
    ['Café au lait.epub', 'caf au lait'],
    ['.hidden', 'hidden'],
    ['no-extension', 'no extension'],
  ])('file name %j → %j', (name, key) => {
    expect(normalizeFileName(name)).toBe(key);
  });

  it('keeps the whole name of a folder audiobook', () => {
    expect(normalizeFileName('Dune Vol. 1', true)).toBe('dune vol 1');
    expect(normalizeFileName('Dune Vol. 1', false)).toBe('dune vol');
  });
});

// --- grouping over compact rows ---

let nextFileId = 1;
function file(over: Partial<CandidateFile> = {}): CandidateFile {
  return { id: nextFileId++, bookType: 'EPUB', isBook: true, libraryPathId: 1, subPath: '', fileName: `f${nextFileId}.epub`, folderBased: false, contentHash: null, ...over };
}

function book(id: number, over: Partial<CandidateBook> = {}): CandidateBook {
  return {
    id, libraryPathId: 1, metadataMatchScore: null, title: `Unique title ${id}`, isbn13: null, isbn10: null, goodreadsId: null, hardcoverId: null,
    googleId: null, asin: null, audibleId: null, comicvineId: null, seriesNumber: null, authors: [`Author ${id}`], files: [file()], ...over,
  };
}

const ALL = new Set<MatchReason>(MATCH_REASONS);
const only = (...reasons: MatchReason[]): Set<MatchReason> => new Set(reasons);
const group = (books: CandidateBook[], strategies: Set<MatchReason> = ALL) => groupDuplicates(books, { strategies, formatPriority: null });

describe('grouping strategies', () => {
  it('IDENTICAL_CONTENT: same hash of a book file, transitively; supplementary files do not count', () => {
    const books = [
      book(1, { files: [file({ contentHash: 'h1' })] }),
      book(2, { files: [file({ contentHash: 'h1' }), file({ contentHash: 'h2', bookType: 'PDF' })] }),
      book(3, { files: [file({ contentHash: 'h2', bookType: 'PDF' })] }),
      book(4, { files: [file({ contentHash: 'h9' }), file({ contentHash: 'h1', isBook: false, bookType: null })] }),
      book(5, { files: [file({ contentHash: 'h5' })] }),
    ];
    expect(group(books, only('IDENTICAL_CONTENT'))).toEqual([{ matchReason: 'IDENTICAL_CONTENT', suggestedTargetBookId: 2, bookIds: [1, 2, 3] }]);
  });

  it('ISBN: ISBN-13, converted ISBN-10 and hyphenated forms; different ISBNs stay apart', () => {
    const books = [
      book(1, { isbn13: '9780306406157' }),
      book(2, { isbn10: '0306406152' }),
      book(3, { isbn13: '978-0-306-40615-7' }),
      book(4, { isbn13: '9780441013593' }),
      book(5, { isbn13: '9780441172719' }),
      book(6),
    ];
    expect(group(books, only('ISBN'))).toEqual([{ matchReason: 'ISBN', suggestedTargetBookId: 1, bookIds: [1, 2, 3] }]);
  });

  it('EXTERNAL_ID: any shared id links books, transitively; the same value from different sources does not', () => {
    const books = [
      book(1, { goodreadsId: '100' }),
      book(2, { goodreadsId: '100', asin: 'B00X' }),
      book(3, { asin: 'b00x' }),
      book(4, { googleId: '777' }),
      book(5, { hardcoverId: '777' }),
      book(6, { comicvineId: '4000-1' }),
      book(7, { comicvineId: '4000-1', audibleId: 'A1' }),
    ];
    expect(group(books, only('EXTERNAL_ID'))).toEqual([
      { matchReason: 'EXTERNAL_ID', suggestedTargetBookId: 1, bookIds: [1, 2, 3] },
      { matchReason: 'EXTERNAL_ID', suggestedTargetBookId: 6, bookIds: [6, 7] },
    ]);
  });

  it('TITLE_AUTHOR: normalised title and one normalised author in common; books without authors are ignored', () => {
    const books = [
      book(1, { title: 'The Hobbit', authors: ['J.R.R. Tolkien'] }),
      book(2, { title: 'Hobbit: or There and Back Again', authors: ['Tolkien, J. R. R.', 'Christopher Tolkien'] }),
      book(3, { title: 'THE HOBBIT', authors: ['Someone Else'] }),
      book(4, { title: 'The Hobbit', authors: [] }),
      book(5, { title: 'Le Petit Prince', authors: ['Antoine de Saint-Exupéry'] }),
      book(6, { title: 'Petit Prince', authors: ['Antoine de Saint Exupery'] }),
    ];
    expect(group(books, only('TITLE_AUTHOR'))).toEqual([
      { matchReason: 'TITLE_AUTHOR', suggestedTargetBookId: 1, bookIds: [1, 2] },
      { matchReason: 'TITLE_AUTHOR', suggestedTargetBookId: 5, bookIds: [5, 6] },
    ]);
  });

  it('TITLE_AUTHOR: authors link books transitively within one title', () => {
    const books = [
      book(1, { title: 'Good Omens', authors: ['Terry Pratchett'] }),
      book(2, { title: 'Good Omens', authors: ['Pratchett, Terry', 'Neil Gaiman'] }),
      book(3, { title: 'Good Omens', authors: ['Gaiman, Neil'] }),
    ];
    expect(group(books, only('TITLE_AUTHOR'))).toEqual([{ matchReason: 'TITLE_AUTHOR', suggestedTargetBookId: 1, bookIds: [1, 2, 3] }]);
  });

  it('TITLE_AUTHOR: different series numbers keep volumes with the same main title apart', () => {
    const books = [
      book(1, { title: 'Foundation: Book 1', authors: ['Isaac Asimov'], seriesNumber: 1 }),
      book(2, { title: 'Foundation: Book 2', authors: ['Isaac Asimov'], seriesNumber: 2 }),
      book(3, { title: 'Foundation', authors: ['Asimov, Isaac'], seriesNumber: 1 }),
      book(4, { title: 'Dune', authors: ['Frank Herbert'], seriesNumber: 1 }),
      book(5, { title: 'Dune', authors: ['Frank Herbert'] }),
    ];
    expect(group(books, only('TITLE_AUTHOR'))).toEqual([
      { matchReason: 'TITLE_AUTHOR', suggestedTargetBookId: 1, bookIds: [1, 3] },
      { matchReason: 'TITLE_AUTHOR', suggestedTargetBookId: 4, bookIds: [4, 5] },
    ]);
  });

  it('DIRECTORY: same root and sub-folder of the first book file; the library root itself is ignored', () => {
    const books = [
      book(1, { files: [file({ subPath: 'Herbert/Dune' })] }),
      book(2, { files: [file({ subPath: 'Herbert/Dune', bookType: 'PDF' })] }),
      book(3, { files: [file({ subPath: 'Herbert/Dune', libraryPathId: 2 })] }),
      book(4, { files: [file({ subPath: '' })] }),
      book(5, { files: [file({ subPath: '' })] }),
      book(6, { files: [file({ subPath: 'Herbert/Dune', isBook: false, bookType: null }), file({ subPath: 'Elsewhere' })] }),
    ];
    expect(group(books, only('DIRECTORY'))).toEqual([{ matchReason: 'DIRECTORY', suggestedTargetBookId: 1, bookIds: [1, 2] }]);
  });

  it('FILENAME: base name of the first book file after Grimmory\'s clean-up', () => {
    const books = [
      book(1, { files: [file({ fileName: 'Dune.epub', subPath: 'a' })] }),
      book(2, { files: [file({ fileName: 'dune.PDF', subPath: 'b', bookType: 'PDF' })] }),
      book(3, { files: [file({ fileName: 'Dune_Messiah.epub' })] }),
      book(4, { files: [file({ fileName: 'dune-messiah.mobi', bookType: 'MOBI' })] }),
      book(5, { files: [file({ fileName: 'Children of Dune.epub' })] }),
    ];
    expect(group(books, only('FILENAME'))).toEqual([
      { matchReason: 'FILENAME', suggestedTargetBookId: 1, bookIds: [1, 2] },
      { matchReason: 'FILENAME', suggestedTargetBookId: 3, bookIds: [3, 4] },
    ]);
  });

  it('runs strategies in order and never puts a book in two groups', () => {
    const books = [
      book(1, { title: 'Dune', authors: ['Frank Herbert'], isbn13: '9780441013593', files: [file({ contentHash: 'same', fileName: 'Dune.epub' })] }),
      book(2, { title: 'Dune', authors: ['Frank Herbert'], isbn13: '9780441013593', files: [file({ contentHash: 'same', fileName: 'Dune.epub' })] }),
      book(3, { title: 'Dune', authors: ['Frank Herbert'], isbn13: '9780441013593', files: [file({ fileName: 'Dune.epub' })] }),
      book(4, { title: 'Dune', authors: ['Frank Herbert'], goodreadsId: '1', files: [file({ fileName: 'Dune.epub' })] }),
      book(5, { title: 'Dune', authors: ['Frank Herbert'], goodreadsId: '1', files: [file({ fileName: 'Dune.epub' })] }),
      book(6, { title: 'Dune', authors: ['Herbert, Frank'], files: [file({ fileName: 'Dune.epub' })] }),
      book(7, { title: 'Dune', authors: ['Herbert, Frank'], files: [file({ fileName: 'Dune.epub', subPath: 'x' })] }),
      book(8, { files: [file({ fileName: 'Other.epub', subPath: 'x' })] }),
      book(9, { files: [file({ fileName: 'dune.epub' })] }),
      book(10, { files: [file({ fileName: 'DUNE.epub' })] }),
    ];
    const groups = group(books);
    expect(groups.map((g) => [g.matchReason, g.bookIds])).toEqual([
      ['IDENTICAL_CONTENT', [1, 2]],
      ['EXTERNAL_ID', [4, 5]],
      ['TITLE_AUTHOR', [3, 6, 7]],
      ['FILENAME', [9, 10]],
    ]);
    // Book 3 shares the ISBN only with books already grouped by content: alone, so no ISBN group; title/author takes it.
    // Book 8 shares folder x only with book 7 (already grouped): no DIRECTORY group.
    const seen = groups.flatMap((g) => g.bookIds);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('returns nothing when no strategy is on, or for fewer than two books', () => {
    const books = [book(1, { isbn13: '9780306406157' }), book(2, { isbn13: '9780306406157' })];
    expect(group(books, new Set())).toEqual([]);
    expect(group([books[0]!])).toEqual([]);
    expect(group(books, only('ISBN'))).toHaveLength(1);
  });

  it('accepts rows in any order and reports ids ascending', () => {
    const books = [book(9, { isbn13: '9780306406157' }), book(3, { isbn13: '9780306406157' }), book(5, { isbn13: '9780306406157' })];
    expect(group(books, only('ISBN'))).toEqual([{ matchReason: 'ISBN', suggestedTargetBookId: 3, bookIds: [3, 5, 9] }]);
  });
});

describe('suggested target', () => {
  it('prefers the best format by the default priority (EPUB > PDF > AZW3 > MOBI > FB2 > CBX > AUDIOBOOK)', () => {
    const books = [book(1, { files: [file({ bookType: 'PDF' })] }), book(2, { files: [file({ bookType: 'MOBI' })] }), book(3, { files: [file({ bookType: 'EPUB' })] })];
    expect(suggestTarget(books, null)).toBe(3);
    expect(suggestTarget(books.slice(0, 2), null)).toBe(1);
  });

  it('follows the library format priority', () => {
    const books = [book(1, { files: [file({ bookType: 'EPUB' })] }), book(2, { files: [file({ bookType: 'AUDIOBOOK' })] })];
    expect(suggestTarget(books, ['AUDIOBOOK', 'EPUB'])).toBe(2);
    expect(suggestTarget(books, [])).toBe(1);
  });

  it('then more book files, then the metadata match score, then the lowest id', () => {
    const one = [file({ bookType: 'EPUB' })];
    const two = [file({ bookType: 'EPUB' }), file({ bookType: 'PDF' })];
    expect(suggestTarget([book(1, { files: one }), book(2, { files: two })], null)).toBe(2);
    expect(suggestTarget([book(1, { files: [...one, file({ isBook: false, bookType: null })] }), book(2, { files: one })], null)).toBe(1);
    expect(suggestTarget([book(1, { files: one, metadataMatchScore: 40 }), book(2, { files: one, metadataMatchScore: 85.5 })], null)).toBe(2);
    expect(suggestTarget([book(4, { files: one }), book(2, { files: one }), book(3, { files: one })], null)).toBe(2);
    // A book whose files have no known format scores lowest.
    expect(suggestTarget([book(1, { files: [file({ bookType: null })] }), book(2, { files: [file({ bookType: 'AUDIOBOOK' })] })], null)).toBe(2);
  });
});

describe('request flags', () => {
  it('adds the identical-content check whenever another strategy is on, unless turned off', () => {
    expect([...strategiesOf({ libraryId: 1 })]).toEqual([]);
    expect([...strategiesOf({ libraryId: 1, matchByIsbn: true })].sort()).toEqual(['IDENTICAL_CONTENT', 'ISBN']);
    expect([...strategiesOf({ libraryId: 1, matchByIsbn: true, matchByContent: false })]).toEqual(['ISBN']);
    expect([...strategiesOf({ libraryId: 1, matchByContent: true })]).toEqual(['IDENTICAL_CONTENT']);
  });
});

describe('grouping speed', () => {
  it('groups 100,000 compact rows with every strategy in under 5 s of CPU', () => {
    const books: CandidateBook[] = [];
    for (let i = 1; i <= 100_000; i++) {
      const dup = i % 10 === 0 ? i - 1 : i;
      books.push(book(i, {
        title: `Title number ${dup}`, authors: [`Author ${dup % 5000}`], isbn13: i % 7 === 0 ? `978${String(dup).padStart(10, '0')}` : null,
        goodreadsId: i % 11 === 0 ? String(dup) : null,
        files: [file({ fileName: `Title number ${dup}.epub`, subPath: `Author ${dup % 5000}/Title ${dup}`, contentHash: `h${i}` })],
      }));
    }
    // CPU time rather than wall time: the figure stays meaningful on a busy machine.
    const started = process.cpuUsage();
    const groups = group(books);
    const used = process.cpuUsage(started);
    expect(groups.length).toBe(10_000);
    expect((used.user + used.system) / 1e6).toBeLessThan(5);
  });
});

// --- against a real catalog ---

let lib: TempLibrary;
let store: Store;
let library: Library;
const covers = (): string => join(lib.dataDir, 'covers');

async function scan(): Promise<void> {
  await scanLibrary(store, library, { coversRoot: covers(), workers: 0 });
}

async function idOf(fileName: string): Promise<number> {
  const row = await store.db.selectFrom('book_file').select('book_id').where('file_name', '=', fileName).executeTakeFirstOrThrow();
  return row.book_id;
}

function principal(over: Partial<Principal> = {}): Principal {
  return { userId: 99, username: 'reader', isDefaultPassword: false, sessionVersion: 0, permissions: permissionsFromRow({ permission_manipulate_library: 1 }), libraryIds: [], restrictions: [], ...over };
}

async function makeUser(name: string): Promise<number> {
  const row = await store.db.insertInto('users').values({ username: name, password_hash: 'x', name }).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

beforeEach(async () => {
  lib = makeTempLibrary();
  store = await openStore(join(lib.dataDir, 'bindery.sqlite'));
  await writeSimpleEpub(lib.path('a', 'Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'], isbn: '9780441013593' });
  copyFileSync(lib.path('a', 'Dune.epub'), lib.path('Dune copy.epub'));
  await writeSimpleEpub(lib.path('b', 'Dune (retail).epub'), { title: 'Dune', authors: ['Herbert, Frank'], body: 'other edition' });
  await writeSimpleEpub(lib.path('c', 'Emma.epub'), { title: 'Emma', authors: ['Jane Austen'] });
  library = await createLibrary(store.db, { name: 'Books', paths: [lib.root], organizationMode: 'BOOK_PER_FILE' });
  await scan();
});

afterEach(async () => {
  await store.close();
  lib.cleanup();
});

describe('findDuplicates on a catalog', () => {
  it('finds identical copies first, then the same title and author', async () => {
    const found = await findDuplicates(store, { libraryId: library.id, matchByIsbn: true, matchByExternalId: true, matchByTitleAuthor: true, matchByDirectory: true, matchByFilename: true });
    const copyA = await idOf('Dune.epub');
    const copyB = await idOf('Dune copy.epub');
    const retail = await idOf('Dune (retail).epub');
    expect(found.scanned).toBe(4);
    expect(found.strategies).toEqual(['IDENTICAL_CONTENT', 'ISBN', 'EXTERNAL_ID', 'TITLE_AUTHOR', 'DIRECTORY', 'FILENAME']);
    expect(found.groups).toHaveLength(1);
    expect(found.groups[0]).toMatchObject({ matchReason: 'IDENTICAL_CONTENT', bookIds: [copyA, copyB].sort((x, y) => x - y) });

    const noContent = await findDuplicates(store, { libraryId: library.id, matchByIsbn: true, matchByTitleAuthor: true, matchByContent: false });
    expect(noContent.groups.map((g) => [g.matchReason, g.bookIds])).toEqual([
      ['ISBN', [copyA, copyB].sort((x, y) => x - y)],
    ]);
    const titleOnly = await findDuplicates(store, { libraryId: library.id, matchByTitleAuthor: true, matchByContent: false });
    expect(titleOnly.groups.map((g) => [g.matchReason, g.bookIds])).toEqual([['TITLE_AUTHOR', [copyA, copyB, retail].sort((x, y) => x - y)]]);
    expect(found.books.get(copyA)).toMatchObject({ title: 'Dune', authors: ['Frank Herbert'] });
  });

  it('gives no groups for an unknown library or when nothing is asked', async () => {
    expect((await findDuplicates(store, { libraryId: 999, matchByIsbn: true })).groups).toEqual([]);
    expect((await findDuplicates(store, { libraryId: library.id })).groups).toEqual([]);
  });

  it('never shows a non-admin books they cannot see', async () => {
    const request = { libraryId: library.id, matchByTitleAuthor: true };
    expect((await findDuplicates(store, request, principal())).groups).toEqual([]);
    expect((await findDuplicates(store, request, principal({ libraryIds: [library.id] }))).groups).toHaveLength(1);
    expect((await findDuplicates(store, request, principal({ permissions: allPermissions() }))).groups).toHaveLength(1);
    // Tag the copy: a user excluding the tag sees only a pair (the other copy + retail) grouped by title/author.
    const copyB = await idOf('Dune copy.epub');
    const tag = await store.db.insertInto('tag').values({ name: 'Hidden' }).returning('id').executeTakeFirstOrThrow();
    await store.db.insertInto('book_metadata_tag_mapping').values({ book_id: copyB, tag_id: tag.id }).execute();
    const restricted = await findDuplicates(store, request, principal({ libraryIds: [library.id], restrictions: [{ type: 'TAG', mode: 'EXCLUDE', value: 'hidden' }] }));
    expect(restricted.groups).toHaveLength(1);
    expect(restricted.groups[0]!.matchReason).toBe('TITLE_AUTHOR');
    expect(restricted.groups[0]!.bookIds).not.toContain(copyB);
  });

  it('leaves out deleted books', async () => {
    await store.db.updateTable('book').set({ deleted: 1 }).where('id', '=', await idOf('Dune copy.epub')).execute();
    const found = await findDuplicates(store, { libraryId: library.id, matchByIsbn: true });
    expect(found.groups).toEqual([]);
  });
});

describe('attach (merge)', () => {
  it('moves the file row to the target, keeps the file on disk and removes the emptied source', async () => {
    const target = await idOf('Dune.epub');
    const source = await idOf('Dune (retail).epub');
    const result = await attachBookFiles(store, target, [source]);
    expect(result).toMatchObject({ targetBookId: target, deletedSourceBookIds: [source], keptSourceBookIds: [] });
    expect(result.attachedFiles).toEqual([{ id: expect.any(Number), sourceBookId: source, path: lib.path('b', 'Dune (retail).epub') }]);
    expect(existsSync(lib.path('b', 'Dune (retail).epub'))).toBe(true);
    expect(await idOf('Dune (retail).epub')).toBe(target);
    expect(await store.db.selectFrom('book').select('id').where('id', '=', source).executeTakeFirst()).toBeUndefined();
    const files = await listBookFiles(store.db, target);
    expect(files.map((f) => f.fileName)).toEqual(['Dune.epub', 'Dune (retail).epub']);
    expect(files[1]).toMatchObject({ bookId: target, book: true, fileSubPath: 'b', filePath: lib.path('b', 'Dune (retail).epub'), extension: 'epub' });
    // A rescan leaves the merge alone.
    await scan();
    expect(await idOf('Dune (retail).epub')).toBe(target);
    expect(await store.db.selectFrom('book').select('id').execute()).toHaveLength(3);
  });

  it('carries reading progress and shelves of the source to the target', async () => {
    const target = await idOf('Dune.epub');
    const source = await idOf('Dune (retail).epub');
    const alice = await makeUser('alice');
    const bob = await makeUser('bob');
    await store.db.insertInto('user_book_progress').values([
      { user_id: alice, book_id: source, epub_progress_percent: 40, read_status: 'READING', last_read_time: '2026-01-02T00:00:00.000Z' },
      { user_id: bob, book_id: source, read_status: 'READ', date_finished: '2026-01-01T00:00:00.000Z', personal_rating: 5 },
      { user_id: bob, book_id: target, read_status: 'UNREAD', epub_progress_percent: 3 },
    ]).execute();
    const shelf = await store.db.insertInto('shelf').values({ user_id: alice, name: 'Sci-fi' }).returning('id').executeTakeFirstOrThrow();
    await store.db.insertInto('book_shelf_mapping').values({ book_id: source, shelf_id: shelf.id }).execute();

    await attachBookFiles(store, target, [source]);
    const rows = await store.db.selectFrom('user_book_progress').selectAll().where('book_id', '=', target).orderBy('user_id').execute();
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({ user_id: alice, epub_progress_percent: 40, read_status: 'READING' });
    expect(rows[1]).toMatchObject({ user_id: bob, epub_progress_percent: 3, read_status: 'READ', date_finished: '2026-01-01T00:00:00.000Z', personal_rating: 5 });
    expect(await store.db.selectFrom('book_shelf_mapping').select('book_id').where('shelf_id', '=', shelf.id).execute()).toEqual([{ book_id: target }]);
  });

  it('keeps a source that still has supplementary files', async () => {
    const target = await idOf('Dune.epub');
    const source = await idOf('Dune (retail).epub');
    writeFileSync(lib.path('b', 'notes.txt'), 'notes');
    await store.db.insertInto('book_file').values({ book_id: source, library_path_id: library.paths[0]!.id, file_sub_path: 'b', file_name: 'notes.txt', is_book: 0 }).execute();
    const result = await attachBookFiles(store, target, [source]);
    expect(result).toMatchObject({ deletedSourceBookIds: [], keptSourceBookIds: [source] });
    expect((await listBookFiles(store.db, source)).map((f) => f.fileName)).toEqual(['notes.txt']);
    expect((await listBookFiles(store.db, target, true)).map((f) => f.fileName)).toEqual(['Dune.epub', 'Dune (retail).epub']);
    expect(await listBookFiles(store.db, target, false)).toEqual([]);
  });

  it('refuses what Grimmory refuses, changing nothing', async () => {
    const target = await idOf('Dune.epub');
    const source = await idOf('Dune (retail).epub');
    await expect(attachBookFiles(store, target, [target])).rejects.toMatchObject({ code: 'INVALID', message: 'Cannot attach a book to itself' });
    await expect(attachBookFiles(store, 999, [source])).rejects.toMatchObject({ code: 'NOT_FOUND', bookId: 999 });
    await expect(attachBookFiles(store, target, [999])).rejects.toMatchObject({ code: 'NOT_FOUND', bookId: 999 });
    await expect(attachBookFiles(store, target, [source], { principal: principal() })).rejects.toMatchObject({ code: 'HIDDEN' });

    const otherRoot = lib.path('..', 'other');
    await writeSimpleEpub(join(otherRoot, 'X.epub'), { title: 'X' });
    const other = await createLibrary(store.db, { name: 'Other', paths: [otherRoot] });
    await scanLibrary(store, other, { coversRoot: covers(), workers: 0 });
    await expect(attachBookFiles(store, target, [await idOf('X.epub')])).rejects.toMatchObject({ code: 'INVALID', message: expect.stringContaining('same library') });

    const { rmSync } = await import('node:fs');
    rmSync(lib.path('b', 'Dune (retail).epub'));
    await expect(attachBookFiles(store, target, [source])).rejects.toThrow(/Source file not found at expected location/);
    expect(await idOf('Dune.epub')).toBe(target);
    expect(await store.db.selectFrom('book').select('id').where('id', '=', source).executeTakeFirst()).toBeDefined();
    expect(new MergeError('INVALID', 'x')).toBeInstanceOf(Error);
  });

  it('with moveFiles, moves the file next to the target file under the target name, never over another file', async () => {
    const target = await idOf('Dune.epub');
    const source = await idOf('Dune (retail).epub');
    const copy = await idOf('Dune copy.epub');
    const result = await attachBookFiles(store, target, [source, copy], { moveFiles: true });
    expect(result.attachedFiles.map((f) => f.path)).toEqual([lib.path('a', 'Dune_1.epub'), lib.path('a', 'Dune_2.epub')]);
    expect(existsSync(lib.path('b', 'Dune (retail).epub'))).toBe(false);
    expect(existsSync(lib.path('a', 'Dune_1.epub'))).toBe(true);
    expect(existsSync(lib.path('a', 'Dune_2.epub'))).toBe(true);
    expect(existsSync(lib.path('a', 'Dune.epub'))).toBe(true);
    const files = (await listBookFiles(store.db, target)).map((f) => [f.fileSubPath, f.fileName]);
    expect(files.sort()).toEqual([['a', 'Dune.epub'], ['a', 'Dune_1.epub'], ['a', 'Dune_2.epub']]);
    await scan();
    expect(await store.db.selectFrom('book').select('id').execute()).toHaveLength(2);
  });
});

describe('detach', () => {
  it('makes a file a book of its own again, with a title from the file name', async () => {
    const target = await idOf('Dune.epub');
    const source = await idOf('Dune (retail).epub');
    await attachBookFiles(store, target, [source]);
    const fileId = (await store.db.selectFrom('book_file').select('id').where('file_name', '=', 'Dune (retail).epub').executeTakeFirstOrThrow()).id;
    const result = await detachBookFile(store, target, fileId, { coversRoot: covers() });
    expect(result.sourceBookId).toBe(target);
    expect(result.newBookId).not.toBe(target);
    expect(await idOf('Dune (retail).epub')).toBe(result.newBookId);
    const meta = await store.db.selectFrom('book_metadata').select(['title']).where('book_id', '=', result.newBookId).executeTakeFirstOrThrow();
    expect(meta.title).toBe('Dune (retail)');
    const newBook = await store.db.selectFrom('book').selectAll().where('id', '=', result.newBookId).executeTakeFirstOrThrow();
    expect(newBook).toMatchObject({ library_id: library.id, library_path_id: library.paths[0]!.id });
    expect(existsSync(lib.path('b', 'Dune (retail).epub'))).toBe(true);
  });

  it('copies metadata and authors when asked', async () => {
    const target = await idOf('Dune.epub');
    await attachBookFiles(store, target, [await idOf('Dune copy.epub')]);
    const fileId = (await store.db.selectFrom('book_file').select('id').where('file_name', '=', 'Dune copy.epub').executeTakeFirstOrThrow()).id;
    const { newBookId } = await detachBookFile(store, target, fileId, { copyMetadata: true });
    const meta = await store.db.selectFrom('book_metadata').select(['title', 'isbn_13']).where('book_id', '=', newBookId).executeTakeFirstOrThrow();
    expect(meta).toEqual({ title: 'Dune', isbn_13: '9780441013593' });
    const authors = await store.db.selectFrom('book_metadata_author_mapping as m').innerJoin('author as a', 'a.id', 'm.author_id').select('a.name').where('m.book_id', '=', newBookId).execute();
    expect(authors).toEqual([{ name: 'Frank Herbert' }]);
  });

  it('refuses the only file, a file of another book and hidden books', async () => {
    const target = await idOf('Dune.epub');
    const fileId = (await store.db.selectFrom('book_file').select('id').where('book_id', '=', target).executeTakeFirstOrThrow()).id;
    await expect(detachBookFile(store, target, fileId)).rejects.toMatchObject({ code: 'INVALID', message: 'Cannot detach the only file from a book' });
    await expect(detachBookFile(store, await idOf('Emma.epub'), fileId)).rejects.toMatchObject({ code: 'INVALID', message: 'File not found on this book' });
    await expect(detachBookFile(store, target, fileId, { principal: principal() })).rejects.toMatchObject({ code: 'HIDDEN' });
    await expect(detachBookFile(store, 999, fileId)).rejects.toMatchObject({ code: 'NOT_FOUND' });

    writeFileSync(lib.path('a', 'notes.txt'), 'notes');
    const extra = await store.db.insertInto('book_file').values({ book_id: target, library_path_id: library.paths[0]!.id, file_sub_path: 'a', file_name: 'notes.txt', is_book: 0 }).returning('id').executeTakeFirstOrThrow();
    await expect(detachBookFile(store, target, fileId)).rejects.toThrow(/only book format file/);
    // The supplementary file itself may go.
    const { newBookId } = await detachBookFile(store, target, extra.id);
    expect((await listBookFiles(store.db, newBookId)).map((f) => f.fileName)).toEqual(['notes.txt']);
  });
});

import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/store/store.ts';
import { cliFor } from '../helpers/cli.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';



let lib: TempLibrary;

const bindery = cliFor(() => lib.dataDir);

interface JsonOut {
  strategies: string[];
  libraries: { id: number; name: string; books: number; groups: number }[];
  groups: { libraryId: number; matchReason: string; suggestedTargetBookId: number; books: { id: number; title: string; authors: string[]; formats: string[]; files: string[]; suggestedTarget: boolean }[] }[];
}

beforeEach(async () => {
  lib = makeTempLibrary();
  await writeSimpleEpub(lib.path('a', 'Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'], isbn: '9780441013593' });
  copyFileSync(lib.path('a', 'Dune.epub'), lib.path('Dune copy.epub'));
  await writeSimpleEpub(lib.path('b', 'Dune.epub'), { title: 'The Dune', authors: ['Herbert, Frank'], body: 'another edition' });
  await writeSimpleEpub(lib.path('Emma.epub'), { title: 'Emma', authors: ['Jane Austen'] });
  expect((await bindery('library', 'add', 'Books', lib.root, '--mode', 'BOOK_PER_FILE')).code).toBe(0);
  expect((await bindery('scan', 'Books')).code).toBe(0);
});
afterEach(() => lib.cleanup());

describe('bindery duplicates', () => {
  it('prints groups as JSON with the suggested target first, and exits 0', async () => {
    const res = await bindery('--json', 'duplicates');
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout) as JsonOut;
    expect(out.strategies).toEqual(['IDENTICAL_CONTENT', 'ISBN', 'EXTERNAL_ID', 'TITLE_AUTHOR', 'DIRECTORY', 'FILENAME']);
    expect(out.libraries).toEqual([{ id: 1, name: 'Books', books: 4, groups: 1 }]);
    expect(out.groups.map((g) => g.matchReason)).toEqual(['IDENTICAL_CONTENT']);
    const [content] = out.groups;
    expect(content!.books[0]!.suggestedTarget).toBe(true);
    expect(content!.books[0]!.id).toBe(content!.suggestedTargetBookId);
    expect(content!.books.map((b) => b.files[0]).sort()).toEqual([lib.path('Dune copy.epub'), lib.path('a', 'Dune.epub')].sort());
    expect(content!.books[1]).toEqual({ id: expect.any(Number), title: 'Dune', authors: ['Frank Herbert'], formats: ['EPUB'], files: [expect.any(String)], suggestedTarget: false });
    // "The Dune" (b/Dune.epub) would pair with either copy by title/author or file name, but both copies are taken already.
  });

  it('runs the strategies named with --by, and --no-content skips the content check', async () => {
    // The best metadata match score wins among equal formats: make the newest book the suggested target.
    const store = await openStore(join(lib.dataDir, 'bindery.sqlite'));
    const newest = Number((await store.db.selectFrom('book_file').select((eb) => eb.fn.max('book_id').as('id')).where('file_name', 'like', 'Dune%').executeTakeFirstOrThrow()).id);
    await store.db.updateTable('book').set({ metadata_match_score: 90 }).where('id', '=', newest).execute();
    await store.close();
    const res = await bindery('--json', 'duplicates', '--library', 'Books', '--by', 'title-author', '--no-content');
    const out = JSON.parse(res.stdout) as JsonOut;
    expect(out.strategies).toEqual(['TITLE_AUTHOR']);
    expect(out.groups).toHaveLength(1);
    expect(out.groups[0]!.books.map((b) => b.title)).toEqual(expect.arrayContaining(['Dune', 'The Dune']));
    expect(out.groups[0]!.books).toHaveLength(3);
    expect(out.groups[0]!.suggestedTargetBookId).toBe(newest);
    expect(out.groups[0]!.books.map((b) => b.id)).toEqual([newest, ...out.groups[0]!.books.slice(1).map((b) => b.id).sort((a, b) => a - b)]);
    expect(out.groups[0]!.books.slice(1).every((b) => b.id < newest)).toBe(true);

    const text = await bindery('duplicates', '--by', 'isbn');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/#1 IDENTICAL_CONTENT/);
    expect(text.stdout).toMatch(/merge: bindery duplicates merge \d+ \d+/);

    const none = await bindery('duplicates', '--by', 'external-id', '--no-content');
    expect(none.code).toBe(0);
    expect(none.stdout).toMatch(/no duplicates found/);
  });

  it('rejects unknown strategies and libraries', async () => {
    const bad = await bindery('--json', 'duplicates', '--by', 'colour');
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout)).toMatchObject({ error: { code: 'INVALID_ARGUMENT' } });
    const unknown = await bindery('duplicates', '--library', 'Nope');
    expect(unknown.code).toBe(3);
  });
});

describe('bindery duplicates merge', () => {
  async function ids(): Promise<{ target: number; source: number }> {
    const out = JSON.parse((await bindery('--json', 'duplicates', '--by', 'title-author', '--no-content')).stdout) as JsonOut;
    const group = out.groups[0]!;
    const target = group.books.find((b) => b.title === 'Dune')!.id;
    return { target, source: group.books.find((b) => b.title === 'The Dune')!.id };
  }

  it('refuses without --yes when not on a terminal', async () => {
    const { target, source } = await ids();
    const res = await bindery('--json', 'duplicates', 'merge', String(target), String(source));
    expect(res.code).toBe(2);
    expect(JSON.parse(res.stdout)).toMatchObject({ error: { code: 'CONFIRMATION_REQUIRED' } });
    const after = JSON.parse((await bindery('--json', 'books', 'list')).stdout) as unknown[];
    expect(after).toHaveLength(4);
  });

  it('merges with --yes, keeps the file on disk, and reports what happened', async () => {
    const { target, source } = await ids();
    const res = await bindery('--json', 'duplicates', 'merge', String(target), String(source), '--yes');
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({
      targetBookId: target,
      attachedFiles: [{ id: expect.any(Number), sourceBookId: source, path: lib.path('b', 'Dune.epub') }],
      deletedSourceBookIds: [source],
      keptSourceBookIds: [],
    });
    expect(existsSync(lib.path('b', 'Dune.epub'))).toBe(true);
    const shown = JSON.parse((await bindery('--json', 'books', 'show', String(target))).stdout) as { alternativeFormats: { filePath: string }[] };
    expect(shown.alternativeFormats.map((f) => f.filePath)).toEqual([lib.path('b', 'Dune.epub')]);
    expect((await bindery('books', 'show', String(source))).code).toBe(3);
  });

  it('exits 3 for an unknown book and 2 for a merge that cannot be done', async () => {
    const { target } = await ids();
    const missing = await bindery('--json', 'duplicates', 'merge', String(target), '999', '--yes');
    expect(missing.code).toBe(3);
    expect(JSON.parse(missing.stdout)).toMatchObject({ error: { code: 'BOOK_NOT_FOUND' } });
    const self = await bindery('duplicates', 'merge', String(target), String(target), '--yes');
    expect(self.code).toBe(2);
    expect(self.stderr).toMatch(/Cannot attach a book to itself/);
    const bad = await bindery('duplicates', 'merge', 'x', '1', '--yes');
    expect(bad.code).toBe(2);
  });
});

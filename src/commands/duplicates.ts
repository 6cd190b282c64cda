// bindery duplicates [--library L] [--by ...] / bindery duplicates merge TARGET SOURCE... [--yes]
import type { Command } from 'commander';
import { join } from 'node:path';
import type { CandidateBook, MatchReason } from '../core/duplicates/detect.ts';
import type { DuplicateRequest } from '../core/duplicates/find.ts';
import type { Library } from '../core/libraries/libraries.ts';
import { confirm } from './confirm.ts';
import type { CommandContext } from './context.ts';
import { CliError, EXIT } from './exit-codes.ts';
import type { RunCommand } from './run.ts';

/** `--by` names → request flags. */
const BY: Record<string, keyof DuplicateRequest> = {
  content: 'matchByContent',
  isbn: 'matchByIsbn',
  'external-id': 'matchByExternalId',
  'title-author': 'matchByTitleAuthor',
  directory: 'matchByDirectory',
  filename: 'matchByFilename',
};
const DEFAULT_BY = 'isbn,external-id,title-author,directory,filename';

function wholeNumber(value: string, what: string): number {
  if (!/^\d+$/.test(value)) throw new CliError('INVALID_ARGUMENT', `${what} must be a whole number (got "${value}")`, EXIT.USAGE);
  return Number(value);
}

export function parseBy(by: string, content: boolean): Omit<DuplicateRequest, 'libraryId'> {
  const out: Omit<DuplicateRequest, 'libraryId'> = {};
  for (const raw of by.split(',')) {
    const name = raw.trim().toLowerCase();
    if (name === '') continue;
    const flag = BY[name];
    if (!flag) throw new CliError('INVALID_ARGUMENT', `--by: unknown strategy "${raw.trim()}" (use ${Object.keys(BY).join(', ')})`, EXIT.USAGE);
    (out as Record<string, boolean>)[flag] = true;
  }
  if (!content) out.matchByContent = false;
  return out;
}

export interface JsonBook {
  id: number;
  title: string | null;
  authors: string[];
  formats: string[];
  files: string[];
  suggestedTarget: boolean;
}

export interface JsonGroup {
  libraryId: number;
  matchReason: MatchReason;
  suggestedTargetBookId: number;
  /** The suggested target first, then by id. */
  books: JsonBook[];
}

function bookOut(book: CandidateBook, library: Library, target: number): JsonBook {
  const roots = new Map(library.paths.map((p) => [p.id, p.path]));
  const formats = [...new Set(book.files.filter((f) => f.isBook).map((f) => f.bookType ?? '?'))];
  const files = book.files
    .filter((f) => f.isBook)
    .map((f) => {
      const root = roots.get(f.libraryPathId ?? book.libraryPathId ?? -1);
      return root === undefined ? join(f.subPath, f.fileName) : join(root, f.subPath, f.fileName);
    });
  return { id: book.id, title: book.title, authors: book.authors, formats, files, suggestedTarget: book.id === target };
}

export function registerDuplicates(program: Command, run: RunCommand): void {
  const duplicates = program
    .command('duplicates')
    .description('find books that are probably the same (nothing is merged or deleted)')
    .option('--library <library>', 'only this library (id or name); default: every library')
    .option('--by <strategies>', `comma-separated: ${DEFAULT_BY}`, DEFAULT_BY)
    .option('--no-content', 'skip the identical-content check that runs first')
    .action((opts: { library?: string; by: string; content: boolean }) =>
      run(async (ctx: CommandContext) => {
        const request = parseBy(opts.by, opts.content);
        const { findDuplicates } = await import('../core/duplicates/find.ts');
        const { findLibrary, listLibraries } = await import('../core/libraries/libraries.ts');
        const store = await ctx.store();
        const libraries = opts.library ? [await findLibrary(store.db, opts.library)] : await listLibraries(store.db);
        const groups: JsonGroup[] = [];
        const perLibrary: { id: number; name: string; books: number; groups: number }[] = [];
        let strategies: MatchReason[] = [];
        for (const library of libraries) {
          const found = await findDuplicates(store, { ...request, libraryId: library.id });
          strategies = found.strategies;
          perLibrary.push({ id: library.id, name: library.name, books: found.scanned, groups: found.groups.length });
          for (const g of found.groups) {
            const books = g.bookIds
              .map((id) => found.books.get(id))
              .filter((b): b is CandidateBook => b !== undefined)
              .map((b) => bookOut(b, library, g.suggestedTargetBookId))
              .sort((a, b) => Number(b.suggestedTarget) - Number(a.suggestedTarget) || a.id - b.id);
            groups.push({ libraryId: library.id, matchReason: g.matchReason, suggestedTargetBookId: g.suggestedTargetBookId, books });
          }
        }
        if (ctx.json) {
          ctx.printJson({ strategies, libraries: perLibrary, groups });
          return;
        }
        if (groups.length === 0) {
          ctx.print(`no duplicates found (${perLibrary.reduce((n, l) => n + l.books, 0)} books checked by ${strategies.join(', ') || 'no strategy'})`);
          return;
        }
        let n = 0;
        for (const g of groups) {
          ctx.print(`${n === 0 ? '' : '\n'}#${++n} ${g.matchReason} (library ${g.libraryId})`);
          for (const b of g.books) {
            ctx.print(`  ${b.suggestedTarget ? '*' : ' '} ${String(b.id).padEnd(7)}${b.title ?? '(untitled)'}${b.authors.length > 0 ? ` — ${b.authors.join(', ')}` : ''}  [${b.formats.join(',')}]`);
            for (const f of b.files) ctx.print(`            ${f}`);
          }
          const sources = g.books.filter((b) => !b.suggestedTarget).map((b) => b.id);
          ctx.print(`    merge: bindery duplicates merge ${g.suggestedTargetBookId} ${sources.join(' ')}`);
        }
        const bookCount = groups.reduce((s, g) => s + g.books.length, 0);
        ctx.print(`\n${groups.length} group${groups.length === 1 ? '' : 's'}, ${bookCount} books; * = suggested target. Nothing was changed.`);
      }),
    );

  duplicates
    .command('merge')
    .description("attach the files of SOURCE books to TARGET as alternative formats; files on disk stay (unless --move-files)")
    .argument('<target>', 'book id that keeps its metadata')
    .argument('<sources...>', 'book ids whose files move to the target')
    .option('--yes', 'do not ask for confirmation (required when not on a terminal)', false)
    .option('--move-files', 'also move the files next to the target file, named after it', false)
    .action((targetArg: string, sourceArgs: string[], opts: { yes: boolean; moveFiles: boolean }) =>
      run(async (ctx) => {
        const target = wholeNumber(targetArg, 'target book id');
        const sources = sourceArgs.map((s) => wholeNumber(s, 'source book id'));
        if (!opts.yes) {
          if (!ctx.interactive) {
            throw new CliError('CONFIRMATION_REQUIRED', 'merging changes the catalog; add --yes to confirm (no file is deleted)', EXIT.USAGE);
          }
          const ok = await confirm(`Attach the files of book${sources.length === 1 ? '' : 's'} ${sources.join(', ')} to book ${target}? Source books left without files leave the catalog; their progress and shelves go to book ${target}. No file is deleted.`);
          if (!ok) throw new CliError('CANCELLED', 'nothing was changed', EXIT.USAGE);
        }
        const { attachBookFiles, MergeError } = await import('../core/duplicates/merge.ts');
        let result;
        try {
          result = await attachBookFiles(await ctx.store(), target, sources, { moveFiles: opts.moveFiles });
        } catch (error) {
          if (error instanceof MergeError) {
            if (error.code === 'NOT_FOUND') throw new CliError('BOOK_NOT_FOUND', `no book with id ${error.bookId ?? '?'}`, EXIT.NOT_FOUND);
            throw new CliError('MERGE_INVALID', error.message, EXIT.USAGE);
          }
          throw error;
        }
        if (ctx.json) {
          ctx.printJson(result);
          return;
        }
        ctx.print(`attached ${result.attachedFiles.length} file${result.attachedFiles.length === 1 ? '' : 's'} to book ${result.targetBookId}`);
        for (const f of result.attachedFiles) ctx.print(`  file ${f.id} from book ${f.sourceBookId}: ${f.path ?? '?'}`);
        if (result.deletedSourceBookIds.length > 0) ctx.print(`book${result.deletedSourceBookIds.length === 1 ? '' : 's'} ${result.deletedSourceBookIds.join(', ')} left the catalog (reading progress and shelves went to book ${result.targetBookId})`);
        if (result.keptSourceBookIds.length > 0) ctx.print(`book${result.keptSourceBookIds.length === 1 ? '' : 's'} ${result.keptSourceBookIds.join(', ')} kept (they still have supplementary files)`);
        ctx.print('no file was deleted');
      }),
    );
}

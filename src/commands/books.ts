// bindery books list|show
import type { Command } from 'commander';
import { findLibrary } from '../core/libraries/libraries.ts';
import { CliError, EXIT } from './exit-codes.ts';
import type { RunCommand } from './run.ts';

function wholeNumber(value: string, what: string): number {
  if (!/^\d+$/.test(value)) throw new CliError('INVALID_ARGUMENT', `${what} must be a whole number (got "${value}")`, EXIT.USAGE);
  return Number(value);
}

export function registerBooks(program: Command, run: RunCommand): void {
  const books = program.command('books').description('look at the catalog');

  books
    .command('list')
    .description('list books: id, title, authors, formats')
    .option('--library <library>', 'only this library (id or name)')
    .option('--limit <n>', 'at most this many')
    .option('--offset <n>', 'skip this many', '0')
    .action((opts: { library?: string; limit?: string; offset: string }) =>
      run(async (ctx) => {
        const { listBookItems } = await import('../core/books/book-view.ts');
        const { db } = await ctx.store();
        const libraryId = opts.library ? (await findLibrary(db, opts.library)).id : undefined;
        const items = await listBookItems(db, {
          ...(libraryId !== undefined ? { libraryId } : {}),
          ...(opts.limit !== undefined ? { limit: wholeNumber(opts.limit, '--limit'), offset: wholeNumber(opts.offset, '--offset') } : {}),
        });
        if (ctx.json) ctx.printJson(items);
        else
          items.forEach((b) => {
            const series = b.seriesName ? ` [${b.seriesName}${b.seriesNumber !== null ? ` #${b.seriesNumber}` : ''}]` : '';
            ctx.print(`${b.id}\t${b.title ?? '(untitled)'}${series}\t${b.authors.join(', ')}\t${b.formats.join(',')}${b.missing ? '\tMISSING' : ''}`);
          });
      }),
    );

  books
    .command('show')
    .description('everything the catalog knows about one book')
    .argument('<id>', 'book id')
    .action((id: string) =>
      run(async (ctx) => {
        const { bookJson } = await import('../core/books/book-view.ts');
        const book = await bookJson((await ctx.store()).db, wholeNumber(id, 'book id'));
        if (!book) throw new CliError('BOOK_NOT_FOUND', `no book with id ${id}`, EXIT.NOT_FOUND);
        if (ctx.json) {
          ctx.printJson(book);
          return;
        }
        const meta = book.metadata as Record<string, unknown>;
        const line = (label: string, value: unknown): void => {
          if (value === undefined || value === null || (Array.isArray(value) && value.length === 0)) return;
          ctx.print(`${label.padEnd(12)}${Array.isArray(value) ? value.join(', ') : String(value)}`);
        };
        line('id', book.id);
        line('title', meta.title);
        line('subtitle', meta.subtitle);
        line('authors', meta.authors);
        line('series', meta.seriesName ? `${String(meta.seriesName)}${meta.seriesNumber !== undefined ? ` #${String(meta.seriesNumber)}` : ''}` : undefined);
        line('publisher', meta.publisher);
        line('published', meta.publishedDate);
        line('language', meta.language);
        line('isbn', [meta.isbn13, meta.isbn10].filter(Boolean));
        line('pages', meta.pageCount);
        line('categories', meta.categories);
        line('library', book.libraryName);
        const primary = book.primaryFile as Record<string, unknown> | undefined;
        line('file', primary?.filePath);
        for (const alt of (book.alternativeFormats as Record<string, unknown>[] | undefined) ?? []) line('also', alt.filePath);
        if (book.missing) line('status', 'MISSING (files not found on the last scan)');
      }),
    );
}

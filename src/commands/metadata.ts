// bindery metadata match [--library L | --book ID] [--provider P] [--dry-run] [--review]  (and `metadata sidecar …`)
import type { Command } from 'commander';
import type { ProviderRuntime } from '../core/metadata/provider-context.ts';
import type { BookOutcome, RefreshRequest, RefreshSummary } from '../core/metadata/refresh-run.ts';
import type { ProviderId } from '../core/metadata/provider.ts';
import type { CommandContext } from './context.ts';
import { CliError, EXIT } from './exit-codes.ts';
import { registerSidecarCommands } from './metadata-sidecar.ts';
import type { RunCommand } from './run.ts';

interface MatchOptions {
  library?: string;
  book?: string;
  provider?: string;
  dryRun: boolean;
  review: boolean;
}

interface Progress {
  start(bookId: number, index: number, total: number): void;
  done(outcome: BookOutcome, index: number, total: number): void;
  stop(): void;
}

/** A spinner on a terminal; otherwise one line per book on stderr (cron, CI logs). Nothing with --json. */
async function progressReporter(ctx: CommandContext): Promise<Progress> {
  if (ctx.json) return { start: () => {}, done: () => {}, stop: () => {} };
  if (process.stderr.isTTY) {
    const { default: ora } = await import('ora');
    const spinner = ora({ text: 'matching books', stream: process.stderr }).start();
    return {
      start: (bookId, index, total) => {
        spinner.text = `matching book ${index + 1}/${total} (#${bookId})`;
      },
      done: (outcome) => {
        if (outcome.status === 'failed' || outcome.errors.length > 0) spinner.warn(outcomeLine(outcome)).start();
      },
      stop: () => spinner.stop(),
    };
  }
  return {
    start: () => {},
    done: (outcome, index, total) => process.stderr.write(`[${index + 1}/${total}] ${outcomeLine(outcome)}\n`),
    stop: () => {},
  };
}

function show(value: unknown): string {
  if (value === null || value === undefined) return '∅';
  const text = Array.isArray(value) ? value.join(', ') : String(value);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

function outcomeLine(o: BookOutcome): string {
  const head = `#${o.bookId} ${o.title ?? '(untitled)'}: ${o.status}`;
  const errors = o.errors.length > 0 ? ` (${o.errors.join('; ')})` : '';
  return head + errors;
}

function printSummary(ctx: CommandContext, summary: RefreshSummary, dryRun: boolean): void {
  for (const book of summary.books) {
    ctx.print(outcomeLine(book));
    if (book.status === 'updated' || book.status === 'proposed') {
      for (const c of book.changes) ctx.print(`    ${c.field}: ${show(c.from)} → ${show(c.to)}${c.source ? `  [${c.source}]` : ''}`);
    }
    if (book.coverError) ctx.print(`    cover not used: ${book.coverError}`);
  }
  const c = summary.counts;
  const verb = dryRun ? 'would update' : 'updated';
  ctx.print(
    `${summary.processed} books: ${c.updated} ${verb}, ${c.proposed} ${dryRun ? 'would be proposed' : 'proposed for review'}, ${c.unchanged} unchanged, ${c['no-match']} not found, ${c.locked} locked, ${c.failed + c.missing} failed` +
      (summary.cancelled ? ' (stopped)' : ''),
  );
  if (!dryRun && c.proposed > 0) ctx.print(`review the proposals in the web UI, or over the API: /api/metadata/tasks/${summary.taskId}`);
}

function bookJson(o: BookOutcome): Record<string, unknown> {
  return {
    bookId: o.bookId,
    title: o.title,
    status: o.status,
    changes: o.changes,
    matched: o.matched,
    errors: o.errors,
    ...(o.proposalId !== undefined ? { proposalId: o.proposalId } : {}),
    ...(o.matchScore !== undefined ? { matchScore: o.matchScore } : {}),
    ...(o.coverError ? { coverError: o.coverError } : {}),
  };
}

async function refreshRequest(ctx: CommandContext, opts: MatchOptions): Promise<RefreshRequest> {
  if (opts.library !== undefined && opts.book !== undefined) throw new CliError('INVALID_ARGUMENT', 'give --library or --book, not both', EXIT.USAGE);
  const store = await ctx.store();
  if (opts.book !== undefined) {
    if (!/^\d+$/.test(opts.book.trim())) throw new CliError('INVALID_ARGUMENT', `--book takes a book id, not ${JSON.stringify(opts.book)}`, EXIT.USAGE);
    const id = Number(opts.book);
    const book = await store.db.selectFrom('book').select('id').where('id', '=', id).executeTakeFirst();
    if (!book) throw new CliError('BOOK_NOT_FOUND', `no book with id ${id}`, EXIT.NOT_FOUND);
    return { refreshType: 'BOOKS', bookIds: [id] };
  }
  if (opts.library !== undefined) {
    const { findLibrary } = await import('../core/libraries/libraries.ts');
    const library = await findLibrary(store.db, opts.library);
    return { refreshType: 'LIBRARY', libraryId: library.id };
  }
  const rows = await store.db.selectFrom('book').select('id').where('deleted', '=', 0).orderBy('id').execute();
  return { refreshType: 'BOOKS', bookIds: rows.map((r) => r.id) };
}

async function chosenProvider(name: string | undefined, runtime: ProviderRuntime): Promise<ProviderId | undefined> {
  if (name === undefined) return undefined;
  const [{ PROVIDER_IDS }, { providerById }, { assertUsable }] = await Promise.all([
    import('../core/metadata/provider.ts'),
    import('../core/metadata/providers/index.ts'),
    import('../core/metadata/provider-context.ts'),
  ]);
  const id = PROVIDER_IDS.find((p) => p.toLowerCase() === name.trim().toLowerCase());
  if (!id) throw new CliError('INVALID_ARGUMENT', `unknown provider ${JSON.stringify(name)} (known: ${PROVIDER_IDS.join(', ')})`, EXIT.USAGE);
  const provider = providerById(id);
  if (!provider) throw new CliError('INVALID_ARGUMENT', `provider ${id} is not available in this build`, EXIT.USAGE);
  try {
    assertUsable(provider, runtime);
  } catch (error) {
    throw new CliError('PROVIDER_NOT_USABLE', (error as Error).message, EXIT.USAGE);
  }
  return id;
}

export function registerMetadata(program: Command, run: RunCommand): void {
  const metadata = program.command('metadata').description('match books against metadata providers; sidecar metadata files');

  metadata
    .command('match')
    .description('fetch metadata from the providers and merge it into the books (default: every book)')
    .option('--library <library>', 'only the books of this library (id or name)')
    .option('--book <id>', 'only this book')
    .option('--provider <provider>', 'ask only this provider, for every field (e.g. Google, OpenLibrary, Hardcover, Comicvine)')
    .option('--dry-run', 'show what would change; write nothing', false)
    .option('--review', 'store the results as proposals to review (web UI or /api/metadata/tasks) instead of applying them', false)
    .action((opts: MatchOptions) =>
      run(async (ctx) => {
        const [{ metadataProviderBaseUrls }, { loadProviderRuntime }, { runMetadataRefresh }] = await Promise.all([
          import('../core/config.ts'),
          import('../core/metadata/book-match.ts'),
          import('../core/metadata/refresh-run.ts'),
        ]);
        const store = await ctx.store();
        const request = await refreshRequest(ctx, opts);
        const runtime = await loadProviderRuntime(store.db, ctx.http(), { baseUrls: metadataProviderBaseUrls(ctx.config) });
        const provider = await chosenProvider(opts.provider, runtime);
        const progress = await progressReporter(ctx);
        let stopRequested = false;
        const onSignal = (): void => {
          stopRequested = true;
        };
        process.once('SIGINT', onSignal);
        let summary: RefreshSummary;
        try {
          summary = await runMetadataRefresh({
            db: store.db,
            http: ctx.http(),
            coversRoot: ctx.paths.covers,
            runtime,
            userId: null,
            dryRun: opts.dryRun,
            ...(provider ? { provider } : {}),
            review: opts.review,
            isCancelled: () => stopRequested,
            onStart: (bookId, index, total) => progress.start(bookId, index, total),
            onBook: (outcome, index, total) => progress.done(outcome, index, total),
          }, request);
        } finally {
          progress.stop();
          process.removeListener('SIGINT', onSignal);
        }
        if (ctx.json) {
          ctx.printJson({ dryRun: opts.dryRun, review: opts.review, taskId: opts.dryRun ? null : summary.taskId, total: summary.total, processed: summary.processed, cancelled: summary.cancelled, counts: summary.counts, books: summary.books.map(bookJson) });
        } else printSummary(ctx, summary, opts.dryRun);
        const failed = summary.counts.failed + summary.counts.missing > 0 || summary.books.some((b) => b.errors.length > 0);
        return failed || summary.cancelled ? EXIT.PARTIAL : EXIT.OK;
      }),
    );

  registerSidecarCommands(metadata, run);
}

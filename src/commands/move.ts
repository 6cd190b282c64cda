// bindery move [--library L] [--pattern P] [--dry-run] [--yes]
import type { Command } from 'commander';
import { relative } from 'node:path';
import type { BookMoveResult, MovedFile } from '../core/moves/apply.ts';
import type { MovePlan, PlannedBook } from '../core/moves/plan.ts';
import type { RecoveryReport } from '../core/moves/recover.ts';
import { confirm } from './confirm.ts';
import type { CommandContext } from './context.ts';
import { CliError, EXIT } from './exit-codes.ts';
import type { RunCommand } from './run.ts';

interface MoveOptions {
  library?: string;
  pattern?: string;
  dryRun: boolean;
  yes: boolean;
}

function plannedFiles(book: PlannedBook): MovedFile[] {
  return [...book.files, ...book.sidecars].filter((f) => f.from !== f.to).map((f) => ({ kind: f.kind, bookFileId: f.bookFileId, from: f.from, to: f.to }));
}

function planJson(book: PlannedBook): Record<string, unknown> {
  return {
    bookId: book.bookId,
    title: book.title,
    status: book.status,
    ...(book.reason !== undefined ? { reason: book.reason } : {}),
    libraryId: book.toLibraryId,
    libraryPathId: book.toLibraryPathId,
    files: plannedFiles(book),
    leftBehind: book.leftBehind,
  };
}

function resultJson(book: BookMoveResult): Record<string, unknown> {
  return { bookId: book.bookId, title: book.title, status: book.status, ...(book.reason !== undefined ? { reason: book.reason } : {}), files: book.files, leftBehind: book.leftBehind };
}

function count<T extends string>(statuses: T[], keys: readonly T[]): Record<T, number> {
  return Object.fromEntries(keys.map((k) => [k, statuses.filter((s) => s === k).length])) as Record<T, number>;
}

/** Paths under the book's target folder are shown relative to it; others in full. */
function shown(book: PlannedBook, path: string): string {
  const root = book.files[0]?.toRoot;
  if (!root) return path;
  const rel = relative(root, path);
  return rel.startsWith('..') ? path : rel;
}

function label(book: { bookId: number; title: string | null }): string {
  return `#${book.bookId} ${book.title ?? '(untitled)'}`;
}

function printPlan(ctx: CommandContext, plan: MovePlan): void {
  for (const book of plan.books) {
    if (book.status === 'skipped') ctx.print(`skip ${label(book)}: ${book.reason ?? ''}`);
    if (book.status !== 'move') continue;
    const files = plannedFiles(book);
    ctx.print(label(book) + (files.length === 0 ? ' (catalog only: changes library)' : ''));
    for (const f of files) ctx.print(`    ${shown(book, f.from)} → ${shown(book, f.to)}${f.kind === 'sidecar' ? '  (sidecar)' : ''}`);
    for (const l of book.leftBehind) ctx.print(`    stays: ${shown(book, l.path)} (${l.reason})`);
  }
  const c = count(plan.books.map((b) => b.status), ['move', 'unchanged', 'skipped'] as const);
  ctx.print(`${c.move} to move, ${c.unchanged} already in place, ${c.skipped} skipped`);
}

const NOTHING_RECOVERED: RecoveryReport = { resumed: 0, rolledBack: 0, busy: 0, problems: [] };

function recoveryLine(r: RecoveryReport): string | undefined {
  if (r.resumed === 0 && r.rolledBack === 0 && r.problems.length === 0) return undefined;
  const lines = [`recovered interrupted moves: ${r.resumed} completed, ${r.rolledBack} rolled back`, ...r.problems.map((p) => `  problem: ${p}`)];
  return lines.join('\n');
}

export function registerMove(program: Command, run: RunCommand): void {
  program
    .command('move')
    .description("rename and re-file books by their library's naming pattern (shows the plan, then asks)")
    .option('--library <library>', 'only this library (id or name); default: every library')
    .option('--pattern <pattern>', "naming pattern to use instead of each library's own")
    .option('--dry-run', 'only show the plan; change nothing', false)
    .option('--yes', 'apply without asking (needed when not on a terminal)', false)
    .action((opts: MoveOptions) =>
      run(async (ctx) => {
        const [{ findLibrary, listLibraries }, { inPlaceRequests, planMoves }, { applyMoves }, { unknownParts }] = await Promise.all([
          import('../core/libraries/libraries.ts'),
          import('../core/moves/plan.ts'),
          import('../core/moves/apply.ts'),
          import('../core/naming/pattern.ts'),
        ]);
        const store = await ctx.store();
        // A move interrupted earlier (crash, kill, power cut) was finished or undone when the catalog opened.
        const recovered = (await ctx.recoveredMoves()) ?? NOTHING_RECOVERED;
        const note = recoveryLine(recovered);
        if (note && !ctx.json) process.stderr.write(`${note}\n`);

        if (opts.pattern !== undefined) {
          const unknown = unknownParts(opts.pattern);
          for (const p of unknown.placeholders) process.stderr.write(`warning: unknown placeholder ${p} is kept as written\n`);
          for (const m of unknown.modifiers) process.stderr.write(`warning: unknown modifier :${m} is ignored\n`);
        }
        const libraries = opts.library !== undefined ? [await findLibrary(store.db, opts.library)] : await listLibraries(store.db);
        const requests = await inPlaceRequests(store.db, libraries.map((l) => l.id));
        const plan = await planMoves(store, requests, opts.pattern !== undefined ? { pattern: opts.pattern } : {});
        const toMove = plan.books.filter((b) => b.status === 'move').length;

        if (opts.dryRun) {
          if (ctx.json) ctx.printJson({ dryRun: true, recovered, books: plan.books.map(planJson), summary: count(plan.books.map((b) => b.status), ['move', 'unchanged', 'skipped'] as const) });
          else printPlan(ctx, plan);
          return EXIT.OK;
        }
        if (!ctx.json) printPlan(ctx, plan);

        let results: BookMoveResult[];
        if (toMove === 0) {
          results = plan.books.map((b) => ({ bookId: b.bookId, title: b.title, status: b.status === 'unchanged' ? 'unchanged' : 'skipped', ...(b.reason !== undefined ? { reason: b.reason } : {}), files: [], leftBehind: b.leftBehind }));
        } else {
          if (!opts.yes) {
            if (!ctx.interactive) {
              throw new CliError('CONFIRMATION_REQUIRED', `${toMove} book${toMove === 1 ? '' : 's'} would move; add --yes to apply (or --dry-run to only see the plan)`, EXIT.USAGE);
            }
            if (!(await confirm(`Move the files of ${toMove} book${toMove === 1 ? '' : 's'}?`))) {
              ctx.print('nothing moved');
              return EXIT.OK;
            }
          }
          results = (await applyMoves(store, plan)).books;
        }

        const summary = count(results.map((r) => r.status), ['moved', 'unchanged', 'skipped', 'failed'] as const);
        if (ctx.json) ctx.printJson({ dryRun: false, recovered, books: results.map(resultJson), summary });
        else {
          for (const r of results) {
            if (r.status === 'moved') ctx.print(`moved ${label(r)}`);
            else if (r.status === 'failed') ctx.print(`failed ${label(r)}: ${r.reason ?? ''}`);
          }
          ctx.print(`${summary.moved} moved, ${summary.unchanged} already in place, ${summary.skipped} skipped, ${summary.failed} failed`);
        }
        return summary.failed > 0 || summary.skipped > 0 ? EXIT.PARTIAL : EXIT.OK;
      }),
    );
}

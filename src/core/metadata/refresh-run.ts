// One metadata refresh (Grimmory's MetadataRefreshRequest): every book of a library or the books named, matched
// against the providers its refresh options name, then merged at once or left as proposals for review. Used by the
// daemon's REFRESH_METADATA_MANUAL task and by `bindery metadata match`.
import { randomUUID } from 'node:crypto';
import type { HttpClient } from '../net/http-client.ts';
import type { Db } from '../store/store.ts';
import { CodedError } from '../coded-error.ts';
import { matchBook, proposalMetadata, storedRefreshOptions, type BookMatch } from './book-match.ts';
import { addProposal, createFetchJob, finishFetchJob, setFetchProgress } from './fetch-tasks.ts';
import { refreshOptionsFrom, withSingleProvider, type FieldChange, type RefreshOptions } from './merge.ts';
import { applyMergePlan } from './metadata-apply.ts';
import type { ProviderRuntime } from './provider-context.ts';
import type { ProviderId } from './provider.ts';

export type RefreshErrorCode = 'INVALID_REFRESH_TYPE' | 'LIBRARY_NOT_FOUND' | 'NO_BOOKS';

export class RefreshError extends CodedError<RefreshErrorCode> {}

/** MetadataRefreshRequest as the API takes it. */
export interface RefreshRequest {
  refreshType: 'BOOKS' | 'LIBRARY';
  libraryId?: number | null;
  bookIds?: number[] | null;
  refreshOptions?: unknown;
}

export type BookOutcomeStatus = 'updated' | 'unchanged' | 'proposed' | 'no-match' | 'locked' | 'failed' | 'missing';

export interface BookOutcome {
  bookId: number;
  title: string | null;
  status: BookOutcomeStatus;
  changes: FieldChange[];
  /** Provider → the item used. */
  matched: Partial<Record<ProviderId, string>>;
  /** Provider failures, in words. */
  errors: string[];
  proposalId?: number;
  matchScore?: number | null;
  coverError?: string;
}

export interface RefreshSummary {
  taskId: string;
  total: number;
  processed: number;
  counts: Record<BookOutcomeStatus, number>;
  books: BookOutcome[];
  cancelled: boolean;
}

export interface RefreshRunContext {
  db: Db;
  http: HttpClient;
  coversRoot: string;
  runtime: ProviderRuntime;
  userId: number | null;
  /** Don't write anything (no job, no proposals, no metadata). */
  dryRun?: boolean;
  /** Ask this provider only, for every field. */
  provider?: ProviderId;
  /** Forces review mode on (the CLI's --review). */
  review?: boolean;
  isCancelled?: () => boolean;
  onBook?: (outcome: BookOutcome, index: number, total: number) => void;
  onStart?: (bookId: number, index: number, total: number) => void;
}

/** The books a request names, in id order; refuses a library that does not exist. */
export async function booksOfRequest(db: Db, request: RefreshRequest): Promise<number[]> {
  if (request.refreshType === 'LIBRARY') {
    if (typeof request.libraryId !== 'number') throw new RefreshError('LIBRARY_NOT_FOUND', 'a LIBRARY refresh needs a libraryId');
    const library = await db.selectFrom('library').select('id').where('id', '=', request.libraryId).executeTakeFirst();
    if (!library) throw new RefreshError('LIBRARY_NOT_FOUND', `Library not found with ID: ${request.libraryId}`);
    const rows = await db.selectFrom('book').select('id').where('library_id', '=', request.libraryId).where('deleted', '=', 0).orderBy('id').execute();
    return rows.map((r) => r.id);
  }
  if (request.refreshType === 'BOOKS') return [...new Set(request.bookIds ?? [])];
  throw new RefreshError('INVALID_REFRESH_TYPE', 'Invalid refresh type');
}

function emptyCounts(): Record<BookOutcomeStatus, number> {
  return { updated: 0, unchanged: 0, proposed: 0, 'no-match': 0, locked: 0, failed: 0, missing: 0 };
}

function titleOf(match: BookMatch): string | null {
  const t = match.current.values.title;
  return typeof t === 'string' ? t : null;
}

async function optionsFor(ctx: RefreshRunContext, request: RefreshRequest, bookId: number, cache: Map<number | null, RefreshOptions>): Promise<RefreshOptions> {
  let options: RefreshOptions;
  if (request.refreshOptions !== undefined && request.refreshOptions !== null) options = refreshOptionsFrom(request.refreshOptions);
  else {
    const book = await ctx.db.selectFrom('book').select('library_id').where('id', '=', bookId).executeTakeFirst();
    const libraryId = book?.library_id ?? null;
    const cached = cache.get(libraryId);
    options = cached ?? (await storedRefreshOptions(ctx.db, libraryId));
    cache.set(libraryId, options);
  }
  if (ctx.provider) options = withSingleProvider(options, ctx.provider);
  if (ctx.review) options = { ...options, reviewBeforeApply: true };
  return options;
}

async function refreshBook(ctx: RefreshRunContext, taskId: string, bookId: number, options: RefreshOptions): Promise<BookOutcome> {
  const match = await matchBook(ctx.db, bookId, options, ctx.runtime);
  if (!match) return { bookId, title: null, status: 'missing', changes: [], matched: {}, errors: [] };
  const base: BookOutcome = {
    bookId,
    title: titleOf(match),
    status: 'unchanged',
    changes: match.plan.changes,
    matched: Object.fromEntries([...match.chosen].map(([p, c]) => [p, c.providerItemId])),
    errors: match.outcomes.filter((o) => o.error).map((o) => (o.error as Error).message),
  };
  if (match.current.allLocked) return { ...base, status: 'locked', changes: [] };
  if (match.chosen.size === 0) return { ...base, status: base.errors.length > 0 && match.outcomes.every((o) => o.error) ? 'failed' : 'no-match' };
  if (options.reviewBeforeApply === true) {
    if (ctx.dryRun) return { ...base, status: 'proposed' };
    const proposalId = await addProposal(ctx.db, taskId, bookId, proposalMetadata(match));
    return { ...base, status: 'proposed', proposalId };
  }
  if (match.plan.changes.length === 0) return base;
  if (ctx.dryRun) return { ...base, status: 'updated' };
  const applied = await applyMergePlan({ db: ctx.db, http: ctx.http, coversRoot: ctx.coversRoot }, bookId, match.plan);
  return {
    ...base,
    status: applied.changed.length > 0 ? 'updated' : 'unchanged',
    matchScore: applied.matchScore,
    ...(applied.coverError ? { coverError: applied.coverError } : {}),
  };
}

/**
 * Runs a refresh to the end (or until cancelled). Records a metadata fetch job (with the proposals in review mode)
 * unless it is a dry run. One book failing does not stop the others.
 */
export async function runMetadataRefresh(ctx: RefreshRunContext, request: RefreshRequest, taskId: string = randomUUID()): Promise<RefreshSummary> {
  const bookIds = await booksOfRequest(ctx.db, request);
  const summary: RefreshSummary = { taskId, total: bookIds.length, processed: 0, counts: emptyCounts(), books: [], cancelled: false };
  const cache = new Map<number | null, RefreshOptions>();
  const jobOptions = request.refreshOptions !== undefined && request.refreshOptions !== null ? refreshOptionsFrom(request.refreshOptions) : undefined;
  if (!ctx.dryRun) {
    const recorded = jobOptions ?? (await storedRefreshOptions(ctx.db, request.refreshType === 'LIBRARY' ? (request.libraryId ?? null) : null));
    const options = ctx.review ? { ...recorded, reviewBeforeApply: true } : recorded;
    await createFetchJob(ctx.db, { taskId, userId: ctx.userId, totalBooks: bookIds.length, options: options as unknown as Record<string, unknown> });
  }
  try {
    for (const [index, bookId] of bookIds.entries()) {
      if (ctx.isCancelled?.()) {
        summary.cancelled = true;
        break;
      }
      ctx.onStart?.(bookId, index, bookIds.length);
      let outcome: BookOutcome;
      try {
        outcome = await refreshBook(ctx, taskId, bookId, await optionsFor(ctx, request, bookId, cache));
      } catch (error) {
        outcome = { bookId, title: null, status: 'failed', changes: [], matched: {}, errors: [error instanceof Error ? error.message : String(error)] };
      }
      summary.books.push(outcome);
      summary.counts[outcome.status]++;
      summary.processed++;
      ctx.onBook?.(outcome, index, bookIds.length);
      if (!ctx.dryRun) await setFetchProgress(ctx.db, taskId, summary.processed, `Processed: ${outcome.title ?? `book ${bookId}`}`);
    }
  } catch (error) {
    if (!ctx.dryRun) await finishFetchJob(ctx.db, taskId, 'ERROR', `Fatal error during metadata refresh: ${error instanceof Error ? error.message : String(error)}`);
    throw error;
  }
  if (!ctx.dryRun) {
    if (summary.cancelled) await finishFetchJob(ctx.db, taskId, 'CANCELLED', 'Task cancelled by user');
    else await finishFetchJob(ctx.db, taskId, 'COMPLETED', 'Batch metadata fetch successfully completed!');
  }
  return summary;
}

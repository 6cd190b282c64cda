// Reviewing a proposal: ACCEPTED merges the proposed metadata into the book with the options its job ran with;
// REJECTED and FETCHED only record the review.
import type { HttpClient } from '../net/http-client.ts';
import type { Db } from '../store/store.ts';
import { fetchJobOptions, reviewProposal, type ProposalStatus, type ReviewedProposal } from './fetch-tasks.ts';
import { planMerge, refreshOptionsFrom, type FetchedMetadata } from './merge.ts';
import { applyMergePlan, readCurrentMetadata, type ApplyOutcome } from './metadata-apply.ts';

export interface ReviewContext {
  db: Db;
  http: HttpClient;
  coversRoot: string;
}

export interface ReviewResult {
  proposal: ReviewedProposal;
  /** What accepting wrote; absent when nothing was applied. */
  applied?: ApplyOutcome;
  /** Why an accepted proposal was not applied. */
  skipped?: 'edited-since' | 'book-gone' | 'no-metadata';
}

/**
 * Records the review and, for ACCEPTED, applies the proposal. The Grimmory web UI saves the reviewed metadata itself
 * (PUT /api/v1/books/{id}/metadata) before it marks the proposal ACCEPTED; a book whose metadata changed after the
 * proposal was fetched is therefore left as it is, so the user's choices in the review stand.
 * Undefined when the proposal does not belong to the task.
 */
export async function reviewAndApply(ctx: ReviewContext, taskId: string, proposalId: number, status: ProposalStatus, reviewerUserId: number | null): Promise<ReviewResult | undefined> {
  const proposal = await reviewProposal(ctx.db, taskId, proposalId, status, reviewerUserId);
  if (!proposal || status !== 'ACCEPTED') return proposal && { proposal };
  if (!proposal.metadata) return { proposal, skipped: 'no-metadata' };
  const book = await ctx.db.selectFrom('book').select('metadata_updated_at').where('id', '=', proposal.bookId).executeTakeFirst();
  if (!book) return { proposal, skipped: 'book-gone' };
  if (book.metadata_updated_at !== null && book.metadata_updated_at > proposal.fetchedAt) return { proposal, skipped: 'edited-since' };
  const current = await readCurrentMetadata(ctx.db, proposal.bookId);
  if (!current) return { proposal, skipped: 'book-gone' };
  const options = refreshOptionsFrom(await fetchJobOptions(ctx.db, taskId));
  const { bookId: _bookId, ...metadata } = proposal.metadata;
  const fetched: FetchedMetadata = { metadata, sources: {}, unanswered: [] };
  const plan = planMerge(current, fetched, { replaceMode: options.replaceMode, mergeCategories: options.mergeCategories, refreshCovers: options.refreshCovers });
  return { proposal, applied: await applyMergePlan(ctx, proposal.bookId, plan) };
}

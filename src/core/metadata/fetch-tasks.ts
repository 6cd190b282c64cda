// Metadata fetch jobs and their proposals (metadata_fetch_jobs / metadata_fetch_proposals), in Grimmory's
// MetadataFetchTask, FetchedProposal and MetadataBatchProgressNotification shapes.
import { sql } from 'kysely';
import type { Db } from '../store/store.ts';
import { nowIso } from '../time.ts';
import { emitEvent } from '../events/live-events.ts';

export const FETCH_TASK_STATUSES = ['IN_PROGRESS', 'COMPLETED', 'ERROR', 'CANCELLED'] as const;
export type FetchTaskStatus = (typeof FETCH_TASK_STATUSES)[number];
export const PROPOSAL_STATUSES = ['FETCHED', 'ACCEPTED', 'REJECTED'] as const;
export type ProposalStatus = (typeof PROPOSAL_STATUSES)[number];

type Json = Record<string, unknown>;

export interface FetchedProposalJson {
  proposalId: number;
  taskId: string;
  bookId: number;
  fetchedAt: string | null;
  reviewedAt: string | null;
  reviewerUserId: string | null;
  status: ProposalStatus;
  metadataJson: Json | null;
}

export interface MetadataFetchTaskJson {
  id: string;
  status: FetchTaskStatus;
  completed: number;
  totalBooks: number;
  startedAt: string | null;
  completedAt: string | null;
  initiatedBy: number | null;
  proposals: FetchedProposalJson[];
}

export interface BatchProgressJson {
  taskId: string;
  completed: number;
  total: number;
  message: string;
  status: string;
  review: boolean;
}

export async function createFetchJob(db: Db, job: { taskId: string; userId: number | null; totalBooks: number; options: Json }): Promise<void> {
  await db
    .insertInto('metadata_fetch_jobs')
    .values({ task_id: job.taskId, user_id: job.userId, status: 'IN_PROGRESS', started_at: nowIso(), total_books_count: job.totalBooks, completed_books: 0, options_json: JSON.stringify(job.options) })
    .execute();  await reportProgress(db, job.taskId, `Fetching metadata for ${job.totalBooks} books.`);
}

/** The job as it is now, as a MetadataBatchProgressNotification to the user who started it (or the managers). */
async function reportProgress(db: Db, taskId: string, message: string): Promise<void> {
  const job = await db.selectFrom('metadata_fetch_jobs').select(['user_id', 'status', 'total_books_count', 'completed_books', 'options_json']).where('task_id', '=', taskId).executeTakeFirst();
  if (!job) return;
  await emitEvent(db, {
    kind: 'metadata-progress',
    audience: job.user_id === null ? 'managers' : { userId: job.user_id },
    taskId,
    completed: job.completed_books,
    total: job.total_books_count ?? 0,
    message,
    status: job.status,
    review: parseJson(job.options_json)?.reviewBeforeApply === true,
  });
}

export async function setFetchProgress(db: Db, taskId: string, completed: number, message?: string): Promise<void> {
  await db.updateTable('metadata_fetch_jobs').set({ completed_books: completed, ...(message !== undefined ? { status_message: message } : {}) }).where('task_id', '=', taskId).execute();  await reportProgress(db, taskId, message ?? `Processed ${completed} books.`);
}

export async function finishFetchJob(db: Db, taskId: string, status: Exclude<FetchTaskStatus, 'IN_PROGRESS'>, message: string): Promise<void> {
  await db.updateTable('metadata_fetch_jobs').set({ status, status_message: message, completed_at: nowIso() }).where('task_id', '=', taskId).execute();  await reportProgress(db, taskId, message);
}

export async function addProposal(db: Db, taskId: string, bookId: number, metadata: Json): Promise<number> {
  // proposal_id is numbered by the catalog (SQLite's rowid, an identity column on PostgreSQL).
  const { rows } = await sql<{ proposal_id: number }>`insert into metadata_fetch_proposals (task_id, book_id, fetched_at, status, metadata_json)
    values (${taskId}, ${bookId}, ${nowIso()}, 'FETCHED', ${JSON.stringify(metadata)}) returning proposal_id`.execute(db);
  return (rows[0] as { proposal_id: number }).proposal_id;
}

function parseJson(text: string | null): Json | null {
  if (!text) return null;
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : null;
  } catch {
    return null;
  }
}

/** Grimmory's task details: the job with the proposals still waiting for review (FETCHED). */
export async function fetchTaskDetails(db: Db, taskId: string): Promise<MetadataFetchTaskJson | undefined> {
  const job = await db.selectFrom('metadata_fetch_jobs').selectAll().where('task_id', '=', taskId).executeTakeFirst();
  if (!job) return undefined;
  const proposals = await db.selectFrom('metadata_fetch_proposals').selectAll().where('task_id', '=', taskId).where('status', '=', 'FETCHED').orderBy('proposal_id').execute();
  return {
    id: job.task_id,
    status: job.status as FetchTaskStatus,
    completed: job.completed_books,
    totalBooks: job.total_books_count ?? 0,
    startedAt: job.started_at,
    completedAt: job.completed_at,
    initiatedBy: job.user_id,
    proposals: proposals.map((p) => ({
      proposalId: p.proposal_id,
      taskId: p.task_id,
      bookId: p.book_id,
      fetchedAt: p.fetched_at,
      reviewedAt: p.reviewed_at,
      reviewerUserId: p.reviewer_user_id === null ? null : String(p.reviewer_user_id),
      status: p.status as ProposalStatus,
      metadataJson: parseJson(p.metadata_json),
    })),
  };
}

export async function fetchJobOptions(db: Db, taskId: string): Promise<Json | null> {
  const job = await db.selectFrom('metadata_fetch_jobs').select('options_json').where('task_id', '=', taskId).executeTakeFirst();
  return parseJson(job?.options_json ?? null);
}

/** Removes a job and its proposals; false when there was no such job. */
export async function deleteFetchJob(db: Db, taskId: string): Promise<boolean> {
  const result = await db.deleteFrom('metadata_fetch_jobs').where('task_id', '=', taskId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export interface ReviewedProposal {
  proposalId: number;
  bookId: number;
  fetchedAt: string;
  status: ProposalStatus;
  metadata: Json | null;
}

/** The status a review sends (any case), or undefined for anything else. */
export function proposalStatus(raw: unknown): ProposalStatus | undefined {
  const upper = typeof raw === 'string' ? raw.trim().toUpperCase() : '';
  return (PROPOSAL_STATUSES as readonly string[]).includes(upper) ? (upper as ProposalStatus) : undefined;
}

/** Records a review; undefined when the proposal does not exist or belongs to another task. */
export async function reviewProposal(db: Db, taskId: string, proposalId: number, status: ProposalStatus, reviewerUserId: number | null): Promise<ReviewedProposal | undefined> {
  const proposal = await db.selectFrom('metadata_fetch_proposals').selectAll().where('proposal_id', '=', proposalId).where('task_id', '=', taskId).executeTakeFirst();
  if (!proposal) return undefined;
  await db.updateTable('metadata_fetch_proposals').set({ status, reviewed_at: nowIso(), reviewer_user_id: reviewerUserId }).where('proposal_id', '=', proposalId).execute();
  return { proposalId, bookId: proposal.book_id, fetchedAt: proposal.fetched_at, status, metadata: parseJson(proposal.metadata_json) };
}

/**
 * `GET /api/metadata/tasks/active`: jobs still running, and finished review jobs with proposals left (Grimmory's
 * rule: completed = accepted, total = not rejected; an errored job counts its books).
 */
export async function activeFetchTasks(db: Db): Promise<BatchProgressJson[]> {
  const jobs = await db.selectFrom('metadata_fetch_jobs').selectAll().where('status', 'in', ['IN_PROGRESS', 'COMPLETED', 'ERROR']).orderBy('started_at').execute();
  if (jobs.length === 0) return [];
  const counts = await db
    .selectFrom('metadata_fetch_proposals')
    .select((eb) => ['task_id', 'status', eb.fn.countAll<number>().as('n')])
    .where(
      'task_id',
      'in',
      jobs.map((j) => j.task_id),
    )
    .groupBy(['task_id', 'status'])
    .execute();
  const countOf = (taskId: string, status: ProposalStatus): number => Number(counts.find((c) => c.task_id === taskId && c.status === status)?.n ?? 0);
  const out: BatchProgressJson[] = [];
  for (const job of jobs) {
    const options = parseJson(job.options_json);
    const review = options?.reviewBeforeApply === true;
    const accepted = countOf(job.task_id, 'ACCEPTED');
    const fetched = countOf(job.task_id, 'FETCHED');
    if (job.status === 'IN_PROGRESS') {
      const total = job.total_books_count ?? 0;
      out.push({ taskId: job.task_id, completed: job.completed_books, total, message: job.status_message ?? `Fetching metadata: ${job.completed_books} of ${total} books.`, status: 'IN_PROGRESS', review });
    } else if (job.status === 'ERROR') {
      const total = job.total_books_count ?? accepted + fetched;
      out.push({ taskId: job.task_id, completed: job.completed_books, total, message: `Metadata fetch failed, processed ${job.completed_books} of ${total} books.`, status: 'ERROR', review: true });
    } else {
      out.push({ taskId: job.task_id, completed: accepted, total: accepted + fetched, message: `Metadata fetch completed! ${fetched} books need review.`, status: 'COMPLETED', review: true });
    }
  }
  return out.filter((n) => n.total > 0);
}

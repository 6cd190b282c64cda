// Reading a book's metadata for a merge, and writing a merge plan through the metadata tables (locks are checked again
// by the writer), with the cover fetched through the outgoing HTTP client and the match score brought up to date.
import { sql } from 'kysely';
import { writeMetadataPatch, type ComicPatch, type CreatorRole, type MetadataPatch, type PatchColumn } from '../books/metadata-writer.ts';
import { setCoverImage } from '../covers/cover-update.ts';
import type { HttpClient } from '../net/http-client.ts';
import type { Db } from '../store/store.ts';
import { nowIso } from '../time.ts';
import { FIELD_SPECS, LIST_FIELDS, type ListField } from './fields.ts';
import { afterMetadataChange, type AfterChange } from './after-change.ts';
import { updateMatchScore } from './match-scores.ts';
import type { CandidateComic } from './provider.ts';
import type { CurrentMetadata, MergePlan } from './merge.ts';
import { emitEvent } from '../events/live-events.ts';

type Row = Record<string, unknown>;

const LIST_SOURCES: Record<ListField, { mapping: string; table: string; column: string; order: string }> = {
  authors: { mapping: 'book_metadata_author_mapping', table: 'author', column: 'author_id', order: 'm.sort_order' },
  categories: { mapping: 'book_metadata_category_mapping', table: 'category', column: 'category_id', order: 'n.name' },
  moods: { mapping: 'book_metadata_mood_mapping', table: 'mood', column: 'mood_id', order: 'n.name' },
  tags: { mapping: 'book_metadata_tag_mapping', table: 'tag', column: 'tag_id', order: 'n.name' },
};

async function names(db: Db, bookId: number, field: ListField): Promise<string[]> {
  const s = LIST_SOURCES[field];
  const { rows } = await sql<{ name: string }>`select n.name from ${sql.table(s.mapping)} m join ${sql.table(s.table)} n on n.id = ${sql.ref(`m.${s.column}`)} where m.book_id = ${bookId} order by ${sql.raw(s.order)}`.execute(db);
  return rows.map((r) => r.name);
}

export interface StoredMetadata extends CurrentMetadata {
  /** The raw book_metadata row (empty when the book has none yet). */
  row: Row;
}

/** The book's metadata as a merge sees it; undefined when there is no such book. */
export async function readCurrentMetadata(db: Db, bookId: number): Promise<StoredMetadata | undefined> {
  const book = await db.selectFrom('book').select(['id']).where('id', '=', bookId).executeTakeFirst();
  if (!book) return undefined;
  const row = ((await db.selectFrom('book_metadata').selectAll().where('book_id', '=', bookId).executeTakeFirst()) ?? {}) as Row;
  const values: Record<string, unknown> = {};
  const locked = new Set<string>();
  for (const spec of FIELD_SPECS) {
    if (row[spec.lock] === 1) locked.add(spec.field);
    if (!spec.column) continue;
    const v = row[spec.column];
    if (v === null || v === undefined) continue;
    values[spec.field] = spec.kind === 'boolean' ? v === 1 : v;
  }
  for (const field of LIST_FIELDS) {
    const list = await names(db, bookId, field);
    if (list.length > 0) values[field] = list;
  }
  const coverUpdatedOn = typeof row.cover_updated_on === 'string' ? row.cover_updated_on : undefined;
  if (coverUpdatedOn) values.coverUpdatedOn = coverUpdatedOn;
  return { row, values, locked, allLocked: row.all_fields_locked === 1, hasCover: coverUpdatedOn !== undefined };
}


const COMIC_FIELDS: [keyof CandidateComic, string][] = [
  ['issueNumber', 'issue_number'], ['volumeName', 'volume_name'], ['volumeNumber', 'volume_number'], ['storyArc', 'story_arc'],
  ['storyArcNumber', 'story_arc_number'], ['alternateSeries', 'alternate_series'], ['alternateIssue', 'alternate_issue'],
  ['imprint', 'imprint'], ['format', 'format'], ['blackAndWhite', 'black_and_white'], ['manga', 'manga'],
  ['readingDirection', 'reading_direction'], ['webLink', 'web_link'], ['notes', 'notes'],
];

const COMIC_ROLES: [keyof CandidateComic, CreatorRole][] = [
  ['pencillers', 'PENCILLER'], ['inkers', 'INKER'], ['colorists', 'COLORIST'], ['letterers', 'LETTERER'], ['coverArtists', 'COVER_ARTIST'], ['editors', 'EDITOR'],
];

/** Only what the provider knew: a comic field it left out stays as it is. */
export function comicPatch(comic: CandidateComic): ComicPatch {
  const fields: Record<string, string | number | null> = {};
  for (const [key, column] of COMIC_FIELDS) {
    const v = comic[key];
    if (v === undefined) continue;
    fields[column] = typeof v === 'boolean' ? (v ? 1 : 0) : (v as string | number);
  }
  const creators: Partial<Record<CreatorRole, string[]>> = {};
  for (const [key, role] of COMIC_ROLES) {
    const list = comic[key];
    if (Array.isArray(list) && list.length > 0) creators[role] = list as string[];
  }
  return {
    fields,
    ...(comic.characters?.length ? { characters: comic.characters } : {}),
    ...(comic.teams?.length ? { teams: comic.teams } : {}),
    ...(comic.locations?.length ? { locations: comic.locations } : {}),
    ...(Object.keys(creators).length > 0 ? { creators } : {}),
  };
}

export interface ApplyContext {
  db: Db;
  http: HttpClient;
  coversRoot: string;
}

export interface ApplyOutcome {
  changed: string[];
  locked: string[];
  coverUpdated: boolean;
  /** Why the cover could not be used, when it could not. */
  coverError?: string;
  matchScore: number | null;
  /** The file write-back and sidecar that followed a change (undefined when nothing changed). */
  followUp?: AfterChange;
}

const MAX_COVER_BYTES = 20 * 1024 * 1024;

/** Downloads the cover through the outgoing client and makes it the book's cover (cropping, token, timestamps). */
async function fetchCover(ctx: ApplyContext, bookId: number, url: string): Promise<void> {
  const response = await ctx.http.request({ url, accept: ['image/'], maxBytes: MAX_COVER_BYTES, timeoutMs: 30_000 });
  await setCoverImage(ctx.db, ctx.coversRoot, bookId, 'book', response.body);
}


/**
 * Writes a plan. The cover is downloaded first (outside the write transaction); a cover that cannot be fetched or
 * read is reported, and the rest is written anyway.
 */
export async function applyMergePlan(ctx: ApplyContext, bookId: number, plan: MergePlan): Promise<ApplyOutcome> {
  const outcome: ApplyOutcome = { changed: [], locked: [...plan.lockedFields], coverUpdated: false, matchScore: null };
  if (plan.allLocked) return outcome;
  if (plan.coverUrl) {
    try {
      await fetchCover(ctx, bookId, plan.coverUrl);
      outcome.coverUpdated = true;
    } catch (error) {
      outcome.coverError = error instanceof Error ? error.message : String(error);
    }
  }
  const patch: MetadataPatch = { fields: plan.columns as Partial<Record<PatchColumn, string | number | null>> };
  for (const field of LIST_FIELDS) if (plan.lists[field] !== undefined) patch[field] = plan.lists[field];
  if (plan.comic) patch.comic = comicPatch(plan.comic);
  await ctx.db.transaction().execute(async (trx) => {
    const result = await writeMetadataPatch(trx, bookId, patch);
    outcome.changed.push(...result.changed);
    outcome.locked.push(...result.locked);
    if (outcome.coverUpdated) outcome.changed.push('cover');
    if (outcome.changed.length > 0) {
      await trx.updateTable('book').set({ metadata_updated_at: nowIso() }).where('id', '=', bookId).execute();
      await emitEvent(trx, { kind: 'books-metadata-changed', bookIds: [bookId] });
    }
  });
  if (outcome.changed.length > 0) {
    outcome.followUp = await afterMetadataChange({ db: ctx.db }, ctx.coversRoot, bookId);
    outcome.matchScore = outcome.followUp.matchScore;
  } else {
    outcome.matchScore = await updateMatchScore(ctx.db, bookId);
  }
  return outcome;
}

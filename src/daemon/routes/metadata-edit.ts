// MetadataController's editing routes: one book's metadata, the bulk editor, locks, match scores and the metadata
// manager (merge and delete values across books).
import Type from 'typebox';
import { isAdmin, type Principal } from '../../core/auth/principal.ts';
import { visibleAmong } from '../../core/auth/visibility.ts';
import { bookJson } from '../../core/books/book-view.ts';
import { bookFiles } from '../../core/books/file-locations.ts';
import { kyselyExec } from '../../core/store/sql-exec.ts';
import { CoverImageError, checkCoverImage, MAX_COVER_BYTES } from '../../core/covers/cover-upload.ts';
import { coverLocked, setCoverImage } from '../../core/covers/cover-update.ts';
import { prepareBulkEdit } from '../../core/metadata/bulk.ts';
import { consolidateMetadata, deleteMetadataValues, MERGE_METADATA_TYPES, type MergeMetadataType } from '../../core/metadata/consolidate.ts';
import { applyEdit, parseEdit, REPLACE_MODES, type ReplaceMode } from '../../core/metadata/edit.ts';
import { lockColumnFor, setAllLocks, setLocks } from '../../core/metadata/locks.ts';
import { recalculateMatchScores, updateMatchScore } from '../../core/metadata/match-scores.ts';
import { MetadataEditError } from '../../core/metadata/metadata-fields.ts';
import { requireBookAccess } from '../access.ts';
import { auditMetadataUpdate } from '../audit.ts';
import { principalOf } from '../authenticate.ts';
import type { DaemonContext } from '../context.ts';
import { ApiError, badRequest, forbidden } from '../http-errors.ts';
import { ADMIN, adminOr, type RouteSpec } from '../route-spec.ts';
import { afterBulkChange, afterChange } from './metadata-background.ts';
import { emitEvent } from '../../core/events/live-events.ts';

const BookParams = Type.Object({ bookId: Type.Integer() });
const AnyObject = Type.Object({}, { additionalProperties: true });
const IdList = Type.Union([Type.Array(Type.Integer()), Type.Null()]);

type Json = Record<string, unknown>;

function mapped<T>(work: () => Promise<T>): Promise<T> {
  return work().catch((error: unknown) => {
    if (error instanceof MetadataEditError) {
      if (error.code === 'NOT_FOUND') throw new ApiError(404, error.message);
      if (error.code === 'LOCKED') throw new ApiError(403, 'Attempt to update locked metadata');
      throw badRequest('Validation error', [error.message]);
    }
    throw error;
  });
}

/** BookMetadata as the editor shows it (Grimmory's `toBookMetadata(…, true)`), or without the description. */
export async function metadataOf(ctx: DaemonContext, bookId: number, withDescription = true): Promise<Json> {
  const book = await bookJson(ctx.store.db, bookId);
  const metadata = { ...((book?.metadata as Json | undefined) ?? { bookId }) };
  if (!withDescription) delete metadata.description;
  return metadata;
}

/**
 * Ids among `ids` that exist; any existing book the principal may not see refuses the whole request (403), as a
 * single hidden book would.
 */
async function existingVisible(ctx: DaemonContext, principal: Principal, ids: readonly number[]): Promise<number[]> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return [];
  const existing: number[] = [];
  for (let i = 0; i < unique.length; i += 500) {
    const rows = await ctx.store.db.selectFrom('book').select('id').where('id', 'in', unique.slice(i, i + 500)).execute();
    existing.push(...rows.map((r) => r.id));
  }
  if (isAdmin(principal)) return existing;
  const visible = await visibleAmong(ctx.store.db, principal, existing);
  if (existing.some((id) => !visible.has(id))) throw forbidden('You are not authorized to access this book.');
  return existing;
}

/** A cover named by the editor's thumbnailUrl; a failure costs the cover only, as in Grimmory. */
async function coverFromEditor(ctx: DaemonContext, bookId: number, url: string): Promise<void> {
  try {
    const primary = (await bookFiles(ctx.store.db, bookId))?.primary;
    const kind = primary?.bookType === 'AUDIOBOOK' ? 'audiobook' : 'book';
    if (await coverLocked(ctx.store.db, bookId, kind)) return;
    const response = await ctx.http.request({ url, accept: ['image/'], maxBytes: MAX_COVER_BYTES, timeoutMs: 30_000 });
    await checkCoverImage(response.body);
    await setCoverImage(ctx.store.db, ctx.paths.covers, bookId, kind, response.body);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    ctx.log.warn({ bookId, reason, imageError: error instanceof CoverImageError }, 'cover from the metadata editor not used');
  }
}

const MetadataQuery = Type.Object({
  mergeCategories: Type.Optional(Type.Boolean({ default: false })),
  replaceMode: Type.Optional(Type.String({ enum: [...REPLACE_MODES], default: 'REPLACE_ALL' })),
});

const ToggleAllLockRequest = Type.Object({ bookIds: Type.Optional(IdList), lock: Type.Optional(Type.Union([Type.String({ enum: ['LOCK', 'UNLOCK'] }), Type.Null()])) });
const ToggleFieldLocksRequest = Type.Object({
  bookIds: Type.Optional(IdList),
  fieldActions: Type.Optional(Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()])),
});
const MergeMetadataRequest = Type.Object({
  metadataType: Type.Optional(Type.Union([Type.String({ enum: [...MERGE_METADATA_TYPES] }), Type.Null()])),
  targetValues: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()])),
  valuesToMerge: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()])),
});
const DeleteMetadataRequest = Type.Object({
  metadataType: Type.String({ enum: [...MERGE_METADATA_TYPES] }),
  valuesToDelete: Type.Array(Type.String(), { minItems: 1 }),
});

export const metadataEditRoutes: RouteSpec[] = [
  {
    method: 'PUT',
    url: '/api/v1/books/{bookId}/metadata',
    auth: 'jwt',
    rule: adminOr('canEditMetadata'),
    schema: { params: BookParams, querystring: MetadataQuery, body: Type.Object({ metadata: Type.Optional(Type.Unknown()), clearFlags: Type.Optional(Type.Unknown()) }) },
    handler: async (request, _reply, ctx) => {
      const { bookId } = request.params as { bookId: number };
      const query = request.query as { mergeCategories?: boolean; replaceMode?: ReplaceMode };
      const body = request.body as { metadata?: unknown; clearFlags?: unknown };
      await requireBookAccess(ctx, principalOf(request), bookId);
      const edit = await mapped(async () => parseEdit(body.metadata, body.clearFlags));
      if (!edit) return metadataOf(ctx, bookId);
      const options = { replaceMode: query.replaceMode ?? 'REPLACE_ALL', mergeCategories: query.mergeCategories === true, mergeMoods: false, mergeTags: false };
      const outcome = await mapped(() => ctx.store.db.transaction().execute((trx) => applyEdit(kyselyExec(trx), bookId, edit, options)));
      if (outcome.coverUrl) await coverFromEditor(ctx, bookId, outcome.coverUrl);
      if (outcome.changed) await afterChange(ctx, bookId);
      else if (outcome.coverUrl) await updateMatchScore(ctx.store.db, bookId);
      if (outcome.changed || outcome.coverUrl) await auditMetadataUpdate(ctx, request, bookId);
      return metadataOf(ctx, bookId);
    },
  },
  {
    method: 'PUT',
    url: '/api/v1/books/bulk-edit-metadata',
    auth: 'jwt',
    rule: adminOr('canBulkEditMetadata'),
    schema: { body: AnyObject },
    handler: async (request, reply, ctx) => {
      const bulk = await mapped(async () => prepareBulkEdit(request.body as Json));
      const ids = await existingVisible(ctx, principalOf(request), bulk.bookIds);
      const changed: number[] = [];
      for (const id of ids) {
        try {
          if (await bulk.run(ctx.store.db, id)) changed.push(id);
        } catch (error) {
          ctx.log.error({ bookId: id, err: error }, 'bulk metadata edit failed for a book');
        }
      }
      await afterBulkChange(ctx, changed);
      return reply.status(204).send();
    },
  },
  {
    method: 'PUT',
    url: '/api/v1/books/metadata/toggle-all-lock',
    auth: 'jwt',
    rule: adminOr('canBulkLockUnlockMetadata'),
    schema: { body: ToggleAllLockRequest },
    handler: async (request, _reply, ctx) => {
      const body = request.body as { bookIds?: number[] | null; lock?: string | null };
      const ids = await existingVisible(ctx, principalOf(request), body.bookIds ?? []);
      const locked = body.lock === 'LOCK';
      await ctx.store.db.transaction().execute(async (trx) => {
        const exec = kyselyExec(trx);
        for (const id of ids) {
          await exec.run('insert into book_metadata (book_id) values (?) on conflict do nothing', [id]);
          await setAllLocks(exec, id, locked);
        }
        await emitEvent(exec, { kind: 'books-changed', bookIds: ids });
      });
      const out: Json[] = [];
      for (const id of ids) out.push(await metadataOf(ctx, id, false));
      return out;
    },
  },
  {
    method: 'PUT',
    url: '/api/v1/books/metadata/toggle-field-locks',
    auth: 'jwt',
    rule: adminOr('canEditMetadata'),
    schema: { body: ToggleFieldLocksRequest },
    handler: async (request, reply, ctx) => {
      const body = request.body as { bookIds?: number[] | null; fieldActions?: Record<string, string> | null };
      const locks = new Map<string, boolean>();
      for (const [field, action] of Object.entries(body.fieldActions ?? {})) {
        const column = lockColumnFor(field);
        if (!column) throw badRequest(`Unknown lockable field: ${field}`);
        locks.set(column, action.toUpperCase() === 'LOCK');
      }
      const ids = await existingVisible(ctx, principalOf(request), body.bookIds ?? []);
      await ctx.store.db.transaction().execute(async (trx) => {
        const exec = kyselyExec(trx);
        for (const id of ids) {
          await exec.run('insert into book_metadata (book_id) values (?) on conflict do nothing', [id]);
          await setLocks(exec, id, locks);
        }
        await emitEvent(exec, { kind: 'books-changed', bookIds: ids });
      });
      return reply.status(200).send();
    },
  },
  {
    method: 'POST',
    url: '/api/v1/books/metadata/recalculate-match-scores',
    auth: 'jwt',
    rule: ADMIN,
    handler: async (_request, reply, ctx) => {
      const books = await recalculateMatchScores(ctx.store);
      ctx.log.info({ books }, 'metadata match scores recalculated');
      return reply.status(204).send();
    },
  },
  {
    method: 'POST',
    url: '/api/v1/books/metadata/manage/consolidate',
    auth: 'jwt',
    rule: adminOr('canBulkEditMetadata'),
    schema: { body: MergeMetadataRequest },
    handler: async (request, reply, ctx) => {
      const body = request.body as { metadataType?: MergeMetadataType | null; targetValues?: string[] | null; valuesToMerge?: string[] | null };
      if (!body.metadataType) throw badRequest('Validation error', ['metadataType: must not be null']);
      const type = body.metadataType;
      const changed = await mapped(() => consolidateMetadata(ctx.store.db, principalOf(request), type, body.targetValues ?? [], body.valuesToMerge ?? []));
      await afterBulkChange(ctx, changed);
      return reply.status(204).send();
    },
  },
  {
    method: 'POST',
    url: '/api/v1/books/metadata/manage/delete',
    auth: 'jwt',
    rule: adminOr('canBulkEditMetadata'),
    schema: { body: DeleteMetadataRequest },
    handler: async (request, reply, ctx) => {
      const body = request.body as { metadataType: MergeMetadataType; valuesToDelete: string[] };
      const changed = await mapped(() => deleteMetadataValues(ctx.store.db, principalOf(request), body.metadataType, body.valuesToDelete));
      await afterBulkChange(ctx, changed);
      return reply.status(204).send();
    },
  },
];

// BookdropFileController: the review queue of the bookdrop folder (list, rescan, edit, discard, import), and the
// covers of the files in it. The badge count (`GET /api/v1/bookdrop/notification`) is in ui-reads.ts.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import Type from 'typebox';
import { canSeeLibrary } from '../../core/auth/visibility.ts';
import { discardFiles } from '../../core/bookdrop/bookdrop-cleanup.ts';
import { bulkEdit, extractFromPattern } from '../../core/bookdrop/bookdrop-edits.ts';
import { BookdropError, listBookdropFiles, selectedIds } from '../../core/bookdrop/bookdrop-files.ts';
import { bookdropCoverPath } from '../../core/bookdrop/bookdrop-paths.ts';
import { finalizeImport, finalizeResultJson, type FinalizeRequest } from '../../core/bookdrop/finalize.ts';
import { syncBookdrop } from '../../core/bookdrop/intake.ts';
import { auditBookdropImport } from '../audit.ts';
import { principalOf } from '../authenticate.ts';
import { daemonBookdropFetcher } from '../bookdrop-fetcher.ts';
import { daemonBookdropEnv } from '../bookdrop-watcher.ts';
import type { DaemonContext } from '../context.ts';
import { ApiError, badRequest, forbidden } from '../http-errors.ts';
import { adminOr, type RouteSpec } from '../route-spec.ts';
import { nullable } from '../schema-types.ts';

const BOOKDROP = adminOr('canAccessBookdrop');
const Ids = nullable(Type.Array(Type.Integer()));
/** BookMetadata as clients send it: any object (unknown and mistyped properties are dropped). */
const Metadata = nullable(Type.Object({}, { additionalProperties: true }));

const SelectionRequest = Type.Object({ selectAll: nullable(Type.Boolean()), excludedIds: Ids, selectedIds: Ids });

const FinalizeRequestSchema = Type.Object({
  selectAll: nullable(Type.Boolean()),
  excludedIds: Ids,
  files: nullable(Type.Array(Type.Object({ fileId: nullable(Type.Integer()), libraryId: nullable(Type.Integer()), pathId: nullable(Type.Integer()), metadata: Metadata }))),
  defaultLibraryId: nullable(Type.Integer()),
  defaultPathId: nullable(Type.Integer()),
});

const PatternExtractRequest = Type.Object({
  pattern: nullable(Type.String()),
  selectAll: nullable(Type.Boolean()),
  excludedIds: Ids,
  selectedIds: Ids,
  preview: nullable(Type.Boolean()),
});

const BulkEditRequest = Type.Object({
  fields: Metadata,
  enabledFields: nullable(Type.Array(Type.String())),
  mergeArrays: nullable(Type.Boolean()),
  selectAll: nullable(Type.Boolean()),
  excludedIds: Ids,
  selectedIds: Ids,
});

/** Spring's Pageable binding: a value that is not a number counts as 0, negatives as 0, and the result is capped. */
function pageParam(raw: string | undefined, fallback: number, max: number): number {
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = /^-?\d+$/.test(raw.trim()) ? Number(raw.trim()) : 0;
  return Math.min(Math.max(value, 0), max);
}

function invalid(field: string, message: string): ApiError {
  return new ApiError(400, 'Validation error', [`${field}: ${message}`]);
}

function bookdropEnv(ctx: DaemonContext) {
  return daemonBookdropEnv(ctx, daemonBookdropFetcher(ctx));
}

export const bookdropRoutes: RouteSpec[] = [
  {
    method: 'GET',
    url: '/api/v1/bookdrop/files',
    auth: 'jwt',
    rule: BOOKDROP,
    schema: { querystring: Type.Object({ status: Type.Optional(Type.String()), page: Type.Optional(Type.String()), size: Type.Optional(Type.String()), sort: Type.Optional(Type.Array(Type.String())) }) },
    handler: async (request, _reply, ctx) => {
      const query = request.query as { status?: string; page?: string; size?: string; sort?: string[] };
      try {
        return await listBookdropFiles(ctx.store.db, query.status, { page: pageParam(query.page, 0, 1_000_000), size: pageParam(query.size, 20, 100) || 20, sort: query.sort ?? [] });
      } catch (error) {
        if (error instanceof BookdropError) throw badRequest(error.message);
        throw error;
      }
    },
  },
  {
    method: 'POST',
    url: '/api/v1/bookdrop/files/discard',
    auth: 'jwt',
    rule: BOOKDROP,
    schema: { body: SelectionRequest },
    handler: async (request, reply, ctx) => {
      const body = request.body as { selectAll?: boolean | null; excludedIds?: number[] | null; selectedIds?: number[] | null };
      const ids = await selectedIds(ctx.store.db, body);
      const result = await discardFiles(bookdropEnv(ctx), ids);
      ctx.log.info({ rows: result.rows, files: result.deletedFiles, failures: result.failures }, 'bookdrop: discarded files');
      return reply.status(200).send();
    },
  },
  {
    method: 'POST',
    url: '/api/v1/bookdrop/imports/finalize',
    auth: 'jwt',
    rule: BOOKDROP,
    schema: { body: FinalizeRequestSchema },
    handler: async (request, _reply, ctx) => {
      const body = request.body as FinalizeRequest;
      const principal = principalOf(request);
      // Files go only into libraries the caller can see.
      const libraryIds = [body.defaultLibraryId, ...(body.files ?? []).map((f) => f.libraryId)].filter((id): id is number => typeof id === 'number');
      for (const id of new Set(libraryIds)) {
        const exists = await ctx.store.db.selectFrom('library').select('id').where('id', '=', id).executeTakeFirst();
        if (exists && !canSeeLibrary(principal, id)) throw forbidden('You are not authorized to access this library.');
      }
      // Files are read on a worker thread: the daemon keeps answering other requests during a long import.
      const outcome = await finalizeImport({ store: ctx.store, dataDir: ctx.config.dataDir, bookdropDir: ctx.config.bookdropDir }, body, { workers: 1 });
      for (const r of outcome.results) {
        if (!r.success) ctx.log.warn({ fileId: r.fileId, fileName: r.fileName, reason: r.message }, 'bookdrop: import failed');
        else if (r.warning) ctx.log.warn({ fileId: r.fileId, path: r.path, reason: r.warning }, 'bookdrop: imported with a problem');
      }
      ctx.log.info({ imported: outcome.successfullyImported, failed: outcome.failed }, 'bookdrop: import finished');
      await auditBookdropImport(ctx, request, outcome.results);
      return finalizeResultJson(outcome);
    },
  },
  {
    method: 'POST',
    url: '/api/v1/bookdrop/rescan',
    auth: 'jwt',
    rule: BOOKDROP,
    handler: async (_request, reply, ctx) => {
      const summary = await syncBookdrop(bookdropEnv(ctx));
      ctx.log.info({ added: summary.added.length, removed: summary.removed, stillBeingWritten: summary.unsettled.length }, 'bookdrop: rescanned');
      return reply.status(200).send();
    },
  },
  {
    method: 'POST',
    url: '/api/v1/bookdrop/files/extract-pattern',
    auth: 'jwt',
    rule: BOOKDROP,
    schema: { body: PatternExtractRequest },
    handler: async (request, _reply, ctx) => {
      const body = request.body as { pattern?: string | null; selectAll?: boolean | null; excludedIds?: number[] | null; selectedIds?: number[] | null; preview?: boolean | null };
      if (typeof body.pattern !== 'string' || body.pattern.trim() === '') throw invalid('pattern', 'must not be blank');
      return extractFromPattern(ctx.store.db, { ...body, pattern: body.pattern });
    },
  },
  {
    method: 'POST',
    url: '/api/v1/bookdrop/files/bulk-edit',
    auth: 'jwt',
    rule: BOOKDROP,
    schema: { body: BulkEditRequest },
    handler: async (request, _reply, ctx) => {
      const body = request.body as { fields?: Record<string, unknown> | null; enabledFields?: string[] | null; mergeArrays?: boolean | null; selectAll?: boolean | null; excludedIds?: number[] | null; selectedIds?: number[] | null };
      const problems = [...(body.fields == null ? ['fields: must not be null'] : []), ...(body.enabledFields == null ? ['enabledFields: must not be null'] : [])];
      if (problems.length > 0) throw new ApiError(400, 'Validation error', problems);
      return bulkEdit(ctx.store.db, { ...body, fields: body.fields, enabledFields: body.enabledFields ?? [] });
    },
  },
  {
    method: 'GET',
    url: '/api/v1/media/bookdrop/{bookdropId}/cover',
    auth: 'jwt-or-query',
    schema: { params: Type.Object({ bookdropId: Type.Integer() }) },
    handler: async (request, reply, ctx) => {
      const { bookdropId } = request.params as { bookdropId: number };
      const path = bookdropCoverPath(ctx.config.dataDir, bookdropId);
      const info = await stat(path).catch(() => undefined);
      if (!info?.isFile()) return reply.status(204).send();
      return reply.type('image/jpeg').header('Cache-Control', 'private, no-cache').header('Content-Length', info.size).send(createReadStream(path));
    },
  },
];

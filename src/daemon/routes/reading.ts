// Reading state: progress reports, read status, progress resets, personal ratings and per-book reader preferences.
import Type from 'typebox';
import type { Principal } from '../../core/auth/principal.ts';
import { visibleAmong } from '../../core/auth/visibility.ts';
import { missingBulkPermission, permissionDeniedMessage } from '../../core/reading/bulk-permissions.ts';
import { isValidRating, RATING_MAX, RATING_MIN, resetPersonalRating, setPersonalRating } from '../../core/reading/personal-rating.ts';
import { carriesProgress, recordProgress, type ProgressInput } from '../../core/reading/progress.ts';
import { missingBookIds } from '../../core/reading/progress-rows.ts';
import { parseReadStatus } from '../../core/reading/read-status.ts';
import { setReadStatus } from '../../core/reading/read-status-update.ts';
import { ReadingError } from '../../core/reading/reading-error.ts';
import { resetProgress } from '../../core/reading/reset-progress.ts';
import { RESET_TYPES, type ResetType } from '../../core/reading/reset-types.ts';
import { getViewerSettings, saveViewerSettings, type BookViewerSettings } from '../../core/reading/viewer-settings.ts';
import { requireBookAccess } from '../access.ts';
import { principalOf } from '../authenticate.ts';
import type { DaemonContext } from '../context.ts';
import { syncToHardcover } from '../hardcover-sync.ts';
import { ApiError, badRequest, bookNotFound, forbidden, notFound } from '../http-errors.ts';
import type { RouteSpec } from '../route-spec.ts';
import { nullable } from '../schema-types.ts';

const BookIdParams = Type.Object({ bookId: Type.Integer() });
const BookIdList = Type.Array(Type.Integer(), { maxItems: 500 });

/** The progress a reader reports, per format: the same types in ReadProgressRequest and the app's UpdateProgressRequest. */
export const ProgressParts = {
  fileProgress: nullable(
    Type.Object({
      bookFileId: Type.Integer(),
      positionData: nullable(Type.String()),
      positionHref: nullable(Type.String()),
      progressPercent: Type.Number(),
      ttsPositionCfi: nullable(Type.String()),
      contentSourceProgressPercent: nullable(Type.Number()),
    }),
  ),
  epubProgress: nullable(
    Type.Object({
      cfi: nullable(Type.String()),
      href: nullable(Type.String()),
      percentage: Type.Number(),
      contentSourceProgressPercent: nullable(Type.Number()),
      ttsPositionCfi: nullable(Type.String()),
    }),
  ),
  pdfProgress: nullable(Type.Object({ page: Type.Integer(), percentage: Type.Number() })),
  cbxProgress: nullable(Type.Object({ page: Type.Integer(), percentage: Type.Number() })),
  audiobookProgress: nullable(Type.Object({ positionMs: Type.Integer(), trackIndex: nullable(Type.Integer()), trackPositionMs: nullable(Type.Integer()), percentage: Type.Number() })),
  dateFinished: nullable(Type.String({ format: 'date-time' })),
};

const ReadProgressRequest = Type.Object({ bookId: Type.Integer(), ...ProgressParts });

const ReadStatusUpdateRequest = Type.Object({ bookIds: Type.Array(Type.Integer(), { minItems: 1 }), status: Type.String() });
const PersonalRatingUpdateRequest = Type.Object({ ids: BookIdList, rating: nullable(Type.Integer({ minimum: RATING_MIN, maximum: RATING_MAX })) });

const pagedPreferences = (spread: string[], view: string[], fit: string[], scroll: string[], background: string[]) =>
  nullable(
    Type.Object({
      bookId: nullable(Type.Integer()),
      pageSpread: nullable(Type.String({ enum: spread })),
      pageViewMode: nullable(Type.String({ enum: view })),
      fitMode: nullable(Type.String({ enum: fit })),
      scrollMode: nullable(Type.String({ enum: scroll })),
      backgroundColor: nullable(Type.String({ enum: background })),
    }),
  );
const FIT_MODES = ['ACTUAL_SIZE', 'FIT_PAGE', 'FIT_WIDTH', 'FIT_HEIGHT', 'AUTO'];
const BookViewerSettingsBody = Type.Object({
  pdfSettings: nullable(Type.Object({ bookId: nullable(Type.Integer()), zoom: nullable(Type.String()), spread: nullable(Type.String()), isDarkTheme: nullable(Type.Boolean()) })),
  newPdfSettings: pagedPreferences(['EVEN', 'ODD'], ['SINGLE_PAGE', 'TWO_PAGE'], FIT_MODES, ['PAGINATED', 'INFINITE'], ['GRAY', 'BLACK', 'WHITE']),
  cbxSettings: pagedPreferences(['EVEN', 'ODD'], ['SINGLE_PAGE', 'TWO_PAGE'], FIT_MODES, ['PAGINATED', 'INFINITE', 'LONG_STRIP'], ['GRAY', 'BLACK', 'WHITE']),
  ebookSettings: nullable(
    Type.Object({
      bookId: nullable(Type.Integer()),
      userId: nullable(Type.Integer()),
      fontFamily: nullable(Type.String()),
      fontSize: nullable(Type.Integer()),
      gap: nullable(Type.Number()),
      hyphenate: nullable(Type.Boolean()),
      isDark: nullable(Type.Boolean()),
      justify: nullable(Type.Boolean()),
      lineHeight: nullable(Type.Number()),
      maxBlockSize: nullable(Type.Integer()),
      maxColumnCount: nullable(Type.Integer()),
      maxInlineSize: nullable(Type.Integer()),
      theme: nullable(Type.String()),
      flow: nullable(Type.String()),
    }),
  ),
});

/** Core refusals as Grimmory's statuses. */
function asApiError(error: unknown): unknown {
  if (!(error instanceof ReadingError)) return error;
  if (error.code === 'BOOK_NOT_FOUND' || error.code === 'FILE_NOT_FOUND') return notFound(error.message);
  return badRequest(error.message);
}

async function mapped<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asApiError(error);
  }
}

/** Every listed book must exist (404 names the first that does not) and be visible to the caller (403). */
export async function requireBooksAccess(ctx: DaemonContext, principal: Principal, bookIds: readonly number[]): Promise<void> {
  const [missing] = await missingBookIds(ctx.store.db, bookIds);
  if (missing !== undefined) throw bookNotFound(missing);
  const visible = await visibleAmong(ctx.store.db, principal, [...new Set(bookIds)]);
  if (bookIds.some((id) => !visible.has(id))) throw forbidden('You are not authorized to access this book.');
}

function requireBulkPermission(principal: Principal, operation: 'STATUS' | ResetType, count: number): void {
  const lacking = missingBulkPermission(principal.permissions, operation, count);
  if (lacking) throw new ApiError(403, permissionDeniedMessage(lacking));
}

function requireIds(ids: number[]): void {
  if (ids.length === 0) throw badRequest('No book IDs provided');
}

export const readingRoutes: RouteSpec[] = [
  {
    method: 'POST',
    url: '/api/v1/books/progress',
    auth: 'jwt',
    schema: { body: ReadProgressRequest },
    handler: async (request, reply, ctx) => {
      const body = request.body as ProgressInput;
      if (!carriesProgress(body)) throw badRequest('Validation error', ['progressValid: At least one progress field must be provided']);
      const principal = principalOf(request);
      await requireBookAccess(ctx, principal, body.bookId);
      const percent = await mapped(() => recordProgress(ctx.store.readingState.db, principal.userId, body));
      syncToHardcover(ctx, principal.userId, body.bookId, percent);
      return reply.status(204).send();
    },
  },
  {
    method: 'POST',
    url: '/api/v1/books/status',
    auth: 'jwt',
    schema: { body: ReadStatusUpdateRequest },
    handler: async (request, _reply, ctx) => {
      const { bookIds, status } = request.body as { bookIds: number[]; status: string };
      const principal = principalOf(request);
      requireBulkPermission(principal, 'STATUS', bookIds.length);
      const readStatus = parseReadStatus(status);
      if (!readStatus) throw badRequest(`Invalid read status: ${status}`);
      await requireBooksAccess(ctx, principal, bookIds);
      return setReadStatus(ctx.store.readingState.db, principal.userId, bookIds, readStatus);
    },
  },
  {
    method: 'POST',
    url: '/api/v1/books/reset-progress',
    auth: 'jwt',
    schema: { querystring: Type.Object({ type: Type.String({ enum: [...RESET_TYPES] }) }), body: BookIdList },
    handler: async (request, _reply, ctx) => {
      const ids = request.body as number[];
      const { type } = request.query as { type: ResetType };
      requireIds(ids);
      const principal = principalOf(request);
      requireBulkPermission(principal, type, ids.length);
      await requireBooksAccess(ctx, principal, ids);
      return resetProgress(ctx.store.readingState.db, principal.userId, ids, type);
    },
  },
  {
    method: 'PUT',
    url: '/api/v1/books/personal-rating',
    auth: 'jwt',
    schema: { body: PersonalRatingUpdateRequest },
    handler: async (request, _reply, ctx) => {
      const { ids, rating = null } = request.body as { ids: number[]; rating?: number | null };
      if (!isValidRating(rating)) throw badRequest('Validation error', [`rating: must be between ${RATING_MIN} and ${RATING_MAX}`]);
      const principal = principalOf(request);
      await requireBooksAccess(ctx, principal, ids);
      return setPersonalRating(ctx.store.readingState.db, principal.userId, ids, rating);
    },
  },
  {
    method: 'POST',
    url: '/api/v1/books/reset-personal-rating',
    auth: 'jwt',
    schema: { body: BookIdList },
    handler: async (request, _reply, ctx) => {
      const ids = request.body as number[];
      requireIds(ids);
      const principal = principalOf(request);
      await requireBooksAccess(ctx, principal, ids);
      return resetPersonalRating(ctx.store.readingState.db, principal.userId, ids);
    },
  },
  {
    method: 'GET',
    url: '/api/v1/books/{bookId}/viewer-setting',
    auth: 'jwt',
    schema: { params: BookIdParams, querystring: Type.Object({ bookFileId: Type.Integer() }) },
    handler: async (request, _reply, ctx) => {
      const { bookId } = request.params as { bookId: number };
      const { bookFileId } = request.query as { bookFileId: number };
      const principal = principalOf(request);
      await requireBookAccess(ctx, principal, bookId);
      return mapped(() => getViewerSettings(ctx.store.db, principal.userId, bookId, bookFileId));
    },
  },
  {
    method: 'PUT',
    url: '/api/v1/books/{bookId}/viewer-setting',
    auth: 'jwt',
    schema: { params: BookIdParams, body: BookViewerSettingsBody },
    handler: async (request, reply, ctx) => {
      const { bookId } = request.params as { bookId: number };
      const principal = principalOf(request);
      await requireBookAccess(ctx, principal, bookId);
      await mapped(() => saveViewerSettings(ctx.store.db, principal.userId, bookId, request.body as BookViewerSettings));
      return reply.status(204).send();
    },
  },
];

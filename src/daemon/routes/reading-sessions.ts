// Reading sessions the web reader reports, and a book's sessions for its owner.
import Type from 'typebox';
import { BOOK_FILE_TYPES } from '../../core/formats/types.ts';
import { ReadingSessionError, recordSession, sessionsOfBook, type SessionInput } from '../../core/reading/reading-sessions.ts';
import { requireBookAccess } from '../access.ts';
import { principalOf } from '../authenticate.ts';
import { ApiError, localDateTime } from '../http-errors.ts';
import type { RouteSpec } from '../route-spec.ts';
import { springPage } from '../../core/spring-page.ts';
import { nullable } from '../schema-types.ts';

const ReadingSessionRequest = Type.Object({
  bookId: Type.Integer(),
  bookType: nullable(Type.String({ enum: [...BOOK_FILE_TYPES] })),
  startTime: Type.String({ minLength: 1 }),
  endTime: Type.String({ minLength: 1 }),
  durationSeconds: Type.Integer({ minimum: 0 }),
  durationFormatted: nullable(Type.String({ maxLength: 50 })),
  startProgress: nullable(Type.Number()),
  endProgress: nullable(Type.Number()),
  progressDelta: nullable(Type.Number()),
  startLocation: nullable(Type.String({ maxLength: 500 })),
  endLocation: nullable(Type.String({ maxLength: 500 })),
});

export const readingSessionRoutes: RouteSpec[] = [
  {
    method: 'POST',
    url: '/api/v1/reading-sessions',
    auth: 'jwt',
    schema: { body: ReadingSessionRequest },
    handler: async (request, reply, ctx) => {
      const body = request.body as SessionInput;
      const principal = principalOf(request);
      await requireBookAccess(ctx, principal, body.bookId);
      try {
        await recordSession(ctx.store.readingState.db, principal.userId, body);
      } catch (error) {
        if (error instanceof ReadingSessionError) throw new ApiError(400, error.message);
        throw error;
      }
      return reply.status(202).send();
    },
  },
  {
    method: 'GET',
    url: '/api/v1/reading-sessions/book/{bookId}',
    auth: 'jwt',
    schema: { params: Type.Object({ bookId: Type.Integer() }), querystring: Type.Object({ page: Type.Optional(Type.Integer({ minimum: 0 })), size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })) }) },
    handler: async (request, _reply, ctx) => {
      const { bookId } = request.params as { bookId: number };
      const { page = 0, size = 5 } = request.query as { page?: number; size?: number };
      const principal = principalOf(request);
      await requireBookAccess(ctx, principal, bookId);
      const { sessions, total } = await sessionsOfBook(ctx.store.db, principal.userId, bookId, { offset: page * size, limit: size });
      return springPage(sessions.map((s) => ({ ...s, createdAt: localDateTime(new Date(s.createdAt)) })), page, size, total);
    },
  },
];

// POST /api/v1/files/move: moves books' files into a library folder, named by that library's pattern.
import Type from 'typebox';
import { bookAccess, canSeeLibrary } from '../../core/auth/visibility.ts';
import { moveBooks } from '../../core/moves/apply.ts';
import type { MoveRequest } from '../../core/moves/plan.ts';
import { principalOf } from '../authenticate.ts';
import { forbidden } from '../http-errors.ts';
import { adminOr, type RouteSpec } from '../route-spec.ts';

const nullableId = Type.Optional(Type.Union([Type.Integer(), Type.Null()]));

/** FileMoveRequest: `bookIds` is accepted and ignored, as in Grimmory; `moves` says what goes where. */
const FileMoveRequest = Type.Object({
  bookIds: Type.Optional(Type.Union([Type.Array(Type.Integer()), Type.Null()])),
  moves: Type.Optional(
    Type.Union([
      Type.Array(Type.Object({ bookId: nullableId, targetLibraryId: nullableId, targetLibraryPathId: nullableId })),
      Type.Null(),
    ]),
  ),
});

interface Body {
  bookIds?: number[] | null;
  moves?: { bookId?: number | null; targetLibraryId?: number | null; targetLibraryPathId?: number | null }[] | null;
}

export const fileMoveRoutes: RouteSpec[] = [
  {
    method: 'POST',
    url: '/api/v1/files/move',
    auth: 'jwt',
    rule: adminOr('canManageLibrary'),
    schema: { body: FileMoveRequest },
    handler: async (request, reply, ctx) => {
      const principal = principalOf(request);
      const body = (request.body ?? {}) as Body;
      const requests: MoveRequest[] = [];
      for (const m of body.moves ?? []) {
        if (typeof m.bookId !== 'number' || typeof m.targetLibraryId !== 'number' || typeof m.targetLibraryPathId !== 'number') continue;
        requests.push({ bookId: m.bookId, targetLibraryId: m.targetLibraryId, targetLibraryPathId: m.targetLibraryPathId });
      }
      // Nothing moves unless the caller may see every book and every target library named.
      for (const r of requests) {
        if ((await bookAccess(ctx.store.db, principal, r.bookId)) === 'hidden') throw forbidden('You are not authorized to access this book.');
        const library = await ctx.store.db.selectFrom('library').select('id').where('id', '=', r.targetLibraryId).executeTakeFirst();
        if (library && !canSeeLibrary(principal, r.targetLibraryId)) throw forbidden('You are not authorized to access this library.');
      }
      if (requests.length > 0) {
        const result = await moveBooks(ctx.store, requests, { log: (message) => ctx.log.warn(message) });
        for (const book of result.books) {
          if (book.status === 'failed' || book.status === 'skipped') ctx.log.warn({ bookId: book.bookId, reason: book.reason }, `file move of book ${book.bookId} ${book.status}`);
          else if (book.status === 'moved') ctx.log.info({ bookId: book.bookId, files: book.files.length }, `moved the files of book ${book.bookId}`);
        }
        if (result.recovered.problems.length > 0) ctx.log.warn({ problems: result.recovered.problems }, 'move recovery left problems');
      }
      // Grimmory answers 200 with no body whatever became of each move (failures are only logged).
      return reply.status(200).send();
    },
  },
];

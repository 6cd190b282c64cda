// The mobile app's notebook: the books with highlights, notes or bookmarks, the entries of one book, and editing or
// deleting an entry named by its id and kind (`?type=HIGHLIGHT|NOTE|BOOKMARK`).
import Type from 'typebox';
import { bookEntriesPage, deleteNotebookEntry, notebookBooksPage, notebookType, updateNotebookEntry, type AppNotebookEntry } from '../../core/app/notebook.ts';
import { principalOf } from '../authenticate.ts';
import { badRequest, localDateTime } from '../http-errors.ts';
import type { RouteSpec } from '../route-spec.ts';
import { appWork, BookIdParams } from './app-shared.ts';
import { nullable } from '../schema-types.ts';

/** Rows fetched per page at most; the notebook of one user rarely needs more, and a client cannot ask for millions. */
const MAX_ROWS = 1000;

const NotebookPaging = { page: Type.Optional(Type.Integer()), size: Type.Optional(Type.Integer()) };
const EntryParams = Type.Object({ entryId: Type.Integer() });
const TypeQuery = Type.Object({ type: Type.String() });

/** Spring's PageRequest refuses these, and Grimmory passes the numbers straight to it. */
function paging(query: { page?: number; size?: number }): { page: number; size: number } {
  const page = query.page ?? 0;
  const size = query.size ?? 20;
  if (page < 0) throw badRequest('Page index must not be less than zero');
  if (size < 1) throw badRequest('Page size must not be less than one');
  return { page, size };
}

/** Times as the app DTO has them: LocalDateTime, without a zone. */
const wire = (e: AppNotebookEntry): AppNotebookEntry => ({ ...e, createdAt: localDateTime(new Date(e.createdAt)), updatedAt: localDateTime(new Date(e.updatedAt)) });

export const appNotebookRoutes: RouteSpec[] = [
  {
    method: 'GET',
    url: '/api/v1/app/notebook/books',
    auth: 'jwt',
    schema: { querystring: Type.Object({ ...NotebookPaging, search: Type.Optional(Type.String({ maxLength: 500 })) }) },
    handler: async (request, _reply, ctx) => {
      const query = request.query as { page?: number; size?: number; search?: string };
      const { page, size } = paging(query);
      const result = await notebookBooksPage(ctx.store.db, principalOf(request), query.search, page, Math.min(size, MAX_ROWS));
      return result;
    },
  },
  {
    method: 'GET',
    url: '/api/v1/app/notebook/books/{bookId}/entries',
    auth: 'jwt',
    schema: {
      params: BookIdParams,
      querystring: Type.Object({ ...NotebookPaging, types: Type.Optional(Type.Array(Type.String())), search: Type.Optional(Type.String({ maxLength: 500 })), sort: Type.Optional(Type.String()) }),
    },
    handler: async (request, _reply, ctx) => {
      const query = request.query as { page?: number; size?: number; types?: string[]; search?: string; sort?: string };
      const { page, size } = paging(query);
      const { bookId } = request.params as { bookId: number };
      const result = await bookEntriesPage(ctx.store.db, principalOf(request), bookId, query, page, Math.min(size, MAX_ROWS));
      return { ...result, content: result.content.map(wire) };
    },
  },
  {
    method: 'PUT',
    url: '/api/v1/app/notebook/entries/{entryId}',
    auth: 'jwt',
    schema: {
      params: EntryParams,
      querystring: TypeQuery,
      body: Type.Object({ note: nullable(Type.String({ maxLength: 5000 })), color: nullable(Type.String({ pattern: '^#[0-9A-Fa-f]{6}$' })) }),
    },
    handler: (request, _reply, ctx) =>
      appWork(async () => {
        const { entryId } = request.params as { entryId: number };
        const type = notebookType((request.query as { type: string }).type);
        const body = request.body as { note?: string | null; color?: string | null };
        return wire(await updateNotebookEntry(ctx.store.db, principalOf(request).userId, entryId, type, body));
      }),
  },
  {
    method: 'DELETE',
    url: '/api/v1/app/notebook/entries/{entryId}',
    auth: 'jwt',
    schema: { params: EntryParams, querystring: TypeQuery },
    handler: (request, reply, ctx) =>
      appWork(async () => {
        const { entryId } = request.params as { entryId: number };
        const type = notebookType((request.query as { type: string }).type);
        await deleteNotebookEntry(ctx.store.db, principalOf(request).userId, entryId, type);
        return reply.status(204).send();
      }),
  },
];

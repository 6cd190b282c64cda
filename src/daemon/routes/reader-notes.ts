// What a reader keeps while reading, each item its owner's alone: bookmarks, highlights, notes (free-form and
// anchored), the PDF annotation layer, and the notebook that gathers them across books.
import { springPage } from '../../core/spring-page.ts';
import Type from 'typebox';
import { createAnchoredNote, deleteAnchoredNote, getAnchoredNote, listAnchoredNotes, updateAnchoredNote, type AnchoredNote } from '../../core/annotations/anchored-notes.ts';
import { createAnnotation, deleteAnnotation, getAnnotation, listAnnotations, updateAnnotation, type Annotation } from '../../core/annotations/annotations.ts';
import { createBookmark, deleteBookmark, getBookmark, listBookmarks, updateBookmark, type Bookmark } from '../../core/annotations/bookmarks.ts';
import { deleteBookNote, listBookNotes, saveBookNote, type BookNote } from '../../core/annotations/book-notes.ts';
import { NOTEBOOK_EXPORT_LIMIT, notebookBooks, notebookEntries, type NotebookEntry, type NotebookQuery } from '../../core/annotations/notebook.ts';
import { deletePdfAnnotations, readPdfAnnotations, savePdfAnnotations } from '../../core/annotations/pdf-annotations.ts';
import { ReaderNoteError } from '../../core/annotations/reader-note-error.ts';
import { requireBookAccess } from '../access.ts';
import { principalOf } from '../authenticate.ts';
import type { DaemonContext } from '../context.ts';
import { ApiError, localDateTime } from '../http-errors.ts';
import type { RouteRequest, RouteSpec } from '../route-spec.ts';
import { nullable } from '../schema-types.ts';

const COLOR = Type.String({ pattern: '^#[0-9A-Fa-f]{6}$' });
const STYLE = Type.String({ pattern: '^(highlight|underline|strikethrough|squiggly)$' });
const BookParams = Type.Object({ bookId: Type.Integer() });
const idParams = (name: string) => Type.Object({ [name]: Type.Integer() });

const CreateBookMarkRequest = Type.Object({
  bookId: Type.Integer(),
  cfi: nullable(Type.String({ maxLength: 1000 })),
  positionMs: nullable(Type.Integer({ minimum: 0 })),
  trackIndex: nullable(Type.Integer({ minimum: 0 })),
  pageNumber: nullable(Type.Integer({ minimum: 1 })),
  title: nullable(Type.String({ maxLength: 255 })),
});
const UpdateBookMarkRequest = Type.Object({
  title: nullable(Type.String({ maxLength: 255 })),
  cfi: nullable(Type.String({ maxLength: 500 })),
  color: nullable(COLOR),
  notes: nullable(Type.String({ maxLength: 2000 })),
  priority: nullable(Type.Integer({ minimum: 1, maximum: 5 })),
  pageNumber: nullable(Type.Integer({ minimum: 1 })),
});
const CreateAnnotationRequest = Type.Object({
  bookId: Type.Integer(),
  cfi: Type.String({ minLength: 1, maxLength: 1000 }),
  text: Type.String({ minLength: 1, maxLength: 5000 }),
  color: nullable(COLOR),
  style: nullable(STYLE),
  note: nullable(Type.String({ maxLength: 5000 })),
  chapterTitle: nullable(Type.String({ maxLength: 500 })),
});
const UpdateAnnotationRequest = Type.Object({ color: nullable(COLOR), style: nullable(STYLE), note: nullable(Type.String({ maxLength: 5000 })) });
const CreateBookNoteRequest = Type.Object({ id: nullable(Type.Integer()), bookId: Type.Integer(), title: nullable(Type.String({ maxLength: 255 })), content: Type.String({ minLength: 1, pattern: '\\S' }) });
const CreateBookNoteV2Request = Type.Object({
  bookId: Type.Integer(),
  cfi: Type.String({ minLength: 1, maxLength: 1000 }),
  selectedText: nullable(Type.String({ maxLength: 5000 })),
  noteContent: Type.String({ minLength: 1 }),
  color: nullable(COLOR),
  chapterTitle: nullable(Type.String({ maxLength: 500 })),
});
const UpdateBookNoteV2Request = Type.Object({ noteContent: nullable(Type.String({ minLength: 1 })), color: nullable(COLOR), chapterTitle: nullable(Type.String({ maxLength: 500 })) });
const NotebookFilters = {
  types: Type.Optional(Type.Array(Type.String())),
  bookId: Type.Optional(Type.Integer()),
  search: Type.Optional(Type.String({ maxLength: 500 })),
  sort: Type.Optional(Type.String()),
};

const NOTE_ERROR_STATUS = { NOT_FOUND: 404, DUPLICATE: 409, INVALID: 400 } as const;

async function mapped<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ReaderNoteError) throw new ApiError(NOTE_ERROR_STATUS[error.code], error.message);
    throw error;
  }
}

const local = (iso: string): string => localDateTime(new Date(iso));
const stamped = <T extends { createdAt: string; updatedAt: string }>(item: T): T => ({ ...item, createdAt: local(item.createdAt), updatedAt: local(item.updatedAt) });
const bookmarkJson = (b: Bookmark): Bookmark => stamped(b);
const annotationJson = (a: Annotation): Annotation => stamped(a);
const noteJson = (n: BookNote): BookNote => stamped(n);
const anchoredJson = (n: AnchoredNote): AnchoredNote => stamped(n);
const entryJson = (e: NotebookEntry): NotebookEntry => stamped(e);

/** The caller, after checking they may see the book (403 hidden, 404 unknown). */
async function readerOf(request: RouteRequest, ctx: DaemonContext, bookId: number): Promise<number> {
  const principal = principalOf(request);
  await requireBookAccess(ctx, principal, bookId);
  return principal.userId;
}

const userOf = (request: RouteRequest): number => principalOf(request).userId;
const param = (request: RouteRequest, name: string): number => (request.params as Record<string, number>)[name] as number;

function crud<Item>(options: {
  base: string;
  idName: string;
  list: (db: DaemonContext['store']['db'], userId: number, bookId: number) => Promise<Item[]>;
  get: (db: DaemonContext['store']['db'], userId: number, id: number) => Promise<Item>;
  create: (db: DaemonContext['store']['db'], userId: number, body: never) => Promise<Item>;
  update: (db: DaemonContext['store']['db'], userId: number, id: number, body: never) => Promise<Item>;
  remove: (db: DaemonContext['store']['db'], userId: number, id: number) => Promise<void>;
  json: (item: Item) => Item;
  createBody: ReturnType<typeof Type.Object>;
  updateBody: ReturnType<typeof Type.Object>;
}): RouteSpec[] {
  const { base, idName, json } = options;
  return [
    {
      method: 'GET',
      url: `${base}/book/{bookId}`,
      auth: 'jwt',
      schema: { params: BookParams },
      handler: async (request, _reply, ctx) => (await options.list(ctx.store.db, await readerOf(request, ctx, param(request, 'bookId')), param(request, 'bookId'))).map(json),
    },
    {
      method: 'GET',
      url: `${base}/{${idName}}`,
      auth: 'jwt',
      schema: { params: idParams(idName) },
      handler: async (request, _reply, ctx) => json(await mapped(() => options.get(ctx.store.db, userOf(request), param(request, idName)))),
    },
    {
      method: 'POST',
      url: base,
      auth: 'jwt',
      schema: { body: options.createBody },
      handler: async (request, _reply, ctx) => {
        const body = request.body as { bookId: number };
        const userId = await readerOf(request, ctx, body.bookId);
        return json(await mapped(() => options.create(ctx.store.db, userId, body as never)));
      },
    },
    {
      method: 'PUT',
      url: `${base}/{${idName}}`,
      auth: 'jwt',
      schema: { params: idParams(idName), body: options.updateBody },
      handler: async (request, _reply, ctx) => json(await mapped(() => options.update(ctx.store.db, userOf(request), param(request, idName), request.body as never))),
    },
    {
      method: 'DELETE',
      url: `${base}/{${idName}}`,
      auth: 'jwt',
      schema: { params: idParams(idName) },
      handler: async (request, reply, ctx) => {
        await mapped(() => options.remove(ctx.store.db, userOf(request), param(request, idName)));
        return reply.status(204).send();
      },
    },
  ];
}

function notebookQuery(query: Record<string, unknown>): NotebookQuery {
  const types = query.types as string[] | undefined;
  return {
    // `types=HIGHLIGHT,NOTE` and `types=HIGHLIGHT&types=NOTE` both arrive as a list.
    types: types?.flatMap((t) => t.split(',')).map((t) => t.trim()).filter(Boolean),
    bookId: query.bookId as number | undefined,
    search: query.search as string | undefined,
    sort: query.sort as string | undefined,
  };
}

export const readerNoteRoutes: RouteSpec[] = [
  ...crud<Bookmark>({
    base: '/api/v1/bookmarks',
    idName: 'bookmarkId',
    list: listBookmarks,
    get: getBookmark,
    create: createBookmark,
    update: updateBookmark,
    remove: deleteBookmark,
    json: bookmarkJson,
    createBody: CreateBookMarkRequest,
    updateBody: UpdateBookMarkRequest,
  }),
  ...crud<Annotation>({
    base: '/api/v1/annotations',
    idName: 'annotationId',
    list: listAnnotations,
    get: getAnnotation,
    create: createAnnotation,
    update: updateAnnotation,
    remove: deleteAnnotation,
    json: annotationJson,
    createBody: CreateAnnotationRequest,
    updateBody: UpdateAnnotationRequest,
  }),
  ...crud<AnchoredNote>({
    base: '/api/v2/book-notes',
    idName: 'noteId',
    list: listAnchoredNotes,
    get: getAnchoredNote,
    create: createAnchoredNote,
    update: updateAnchoredNote,
    remove: deleteAnchoredNote,
    json: anchoredJson,
    createBody: CreateBookNoteV2Request,
    updateBody: UpdateBookNoteV2Request,
  }),
  {
    method: 'GET',
    url: '/api/v1/book-notes/book/{bookId}',
    auth: 'jwt',
    schema: { params: BookParams },
    handler: async (request, _reply, ctx) => (await listBookNotes(ctx.store.db, await readerOf(request, ctx, param(request, 'bookId')), param(request, 'bookId'))).map(noteJson),
  },
  {
    method: 'POST',
    url: '/api/v1/book-notes',
    auth: 'jwt',
    schema: { body: CreateBookNoteRequest },
    handler: async (request, _reply, ctx) => {
      const body = request.body as { id?: number | null; bookId: number; title?: string | null; content: string };
      const userId = await readerOf(request, ctx, body.bookId);
      return noteJson(await mapped(() => saveBookNote(ctx.store.db, userId, body)));
    },
  },
  {
    method: 'DELETE',
    url: '/api/v1/book-notes/{noteId}',
    auth: 'jwt',
    schema: { params: idParams('noteId') },
    handler: async (request, reply, ctx) => {
      await mapped(() => deleteBookNote(ctx.store.db, userOf(request), param(request, 'noteId')));
      return reply.status(204).send();
    },
  },
  {
    method: 'GET',
    url: '/api/v1/pdf-annotations/book/{bookId}',
    auth: 'jwt',
    schema: { params: BookParams },
    handler: async (request, reply, ctx) => {
      const data = await readPdfAnnotations(ctx.store.db, await readerOf(request, ctx, param(request, 'bookId')), param(request, 'bookId'));
      return data === undefined ? reply.status(204).send() : data;
    },
  },
  {
    method: 'PUT',
    url: '/api/v1/pdf-annotations/book/{bookId}',
    auth: 'jwt',
    schema: { params: BookParams, body: Type.Record(Type.String(), Type.String()) },
    handler: async (request, reply, ctx) => {
      const bookId = param(request, 'bookId');
      await savePdfAnnotations(ctx.store.db, await readerOf(request, ctx, bookId), bookId, request.body as Record<string, string>);
      return reply.status(204).send();
    },
  },
  {
    method: 'DELETE',
    url: '/api/v1/pdf-annotations/book/{bookId}',
    auth: 'jwt',
    schema: { params: BookParams },
    handler: async (request, reply, ctx) => {
      const bookId = param(request, 'bookId');
      await deletePdfAnnotations(ctx.store.db, await readerOf(request, ctx, bookId), bookId);
      return reply.status(204).send();
    },
  },
  {
    method: 'GET',
    url: '/api/v1/notebook',
    auth: 'jwt',
    schema: { querystring: Type.Object({ page: Type.Optional(Type.Integer({ minimum: 0 })), size: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })), ...NotebookFilters }) },
    handler: async (request, _reply, ctx) => {
      const query = request.query as { page?: number; size?: number };
      const page = query.page ?? 0;
      const size = query.size ?? 50;
      const { entries, total } = await notebookEntries(ctx.store.db, principalOf(request), notebookQuery(request.query as Record<string, unknown>), { offset: page * size, limit: size });
      return springPage(entries.map(entryJson), page, size, total);
    },
  },
  {
    method: 'GET',
    url: '/api/v1/notebook/export',
    auth: 'jwt',
    schema: { querystring: Type.Object(NotebookFilters) },
    handler: async (request, _reply, ctx) =>
      (await notebookEntries(ctx.store.db, principalOf(request), notebookQuery(request.query as Record<string, unknown>), { offset: 0, limit: NOTEBOOK_EXPORT_LIMIT })).entries.map(entryJson),
  },
  {
    method: 'GET',
    url: '/api/v1/notebook/books',
    auth: 'jwt',
    schema: { querystring: Type.Object({ search: Type.Optional(Type.String({ maxLength: 500 })) }) },
    handler: async (request, _reply, ctx) => notebookBooks(ctx.store.db, principalOf(request), (request.query as { search?: string }).search),
  },
];

// BookController: the book list (streamed), pages, batches, single books, deletion, physical books and file metadata.
import { springPage } from '../../core/spring-page.ts';
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import Type from 'typebox';
import { visibleAmong } from '../../core/auth/visibility.ts';
import { deleteBooks } from '../../core/books/book-delete.ts';
import { bookArrayChunks, booksJson, visibleBookIds, type BookViewOptions } from '../../core/books/book-list.ts';
import { pageOfVisibleBooks, SortError } from '../../core/books/book-page.ts';
import { bookFiles, type LocatedFile } from '../../core/books/file-locations.ts';
import { createPhysicalBook, setPhysical } from '../../core/books/physical-books.ts';
import type * as FileMetadataReaders from '../../core/books/file-metadata.ts';
import { FormatError } from '../../core/formats/errors.ts';
import { CatalogBytesCache } from '../../core/store/catalog-bytes-cache.ts';
import { readingAware } from '../../core/store/reading-state.ts';
import type { Store } from '../../core/store/store.ts';
import type { Principal } from '../../core/auth/principal.ts';
import { requireBookAccess, requireLibraryAccess } from '../access.ts';
import { audit } from '../audit.ts';
import { keepCompressedCopies } from '../compression.ts';
import { principalOf } from '../authenticate.ts';
import type { DaemonContext } from '../context.ts';
import { ApiError, badRequest, bookNotFound } from '../http-errors.ts';
import { adminOr, type RouteSpec } from '../route-spec.ts';
import { nullable } from '../schema-types.ts';

const BookParams = Type.Object({ bookId: Type.Integer() });

/** `ids=1,2&ids=3` → [1, 2, 3]; Spring binds a collection parameter from both spellings. */
export function idList(values: string[] | undefined, name = 'ids'): number[] {
  const ids: number[] = [];
  for (const part of (values ?? []).flatMap((v) => v.split(','))) {
    const trimmed = part.trim();
    if (trimmed === '') continue;
    if (!/^\d{1,15}$/.test(trimmed)) throw new ApiError(400, 'Validation error', [`${name}: '${trimmed}' is not a number`]);
    ids.push(Number(trimmed));
  }
  return [...new Set(ids)];
}

const IdsQuery = { ids: Type.Array(Type.String()) };

/** Spring's Pageable binding: a value that is not a number counts as 0, negatives as 0, and the result is capped. */
function pageParam(raw: string | undefined, fallback: number, max: number): number {
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = /^-?\d+$/.test(raw.trim()) ? Number(raw.trim()) : 0;
  return Math.min(Math.max(value, 0), max);
}

function bookView(principal: Principal, overrides: Partial<BookViewOptions> & Pick<BookViewOptions, 'listView' | 'withDescription' | 'user'>): BookViewOptions {
  return { principal, ...overrides };
}

/** A single book in full, as Grimmory's BookMapper returns it. */
async function fullBook(ctx: DaemonContext, principal: Principal, bookId: number, options: Pick<BookViewOptions, 'withDescription' | 'user'>): Promise<Record<string, unknown>> {
  const [book] = await booksJson(ctx.store, [bookId], bookView(principal, { listView: false, ...options }));
  if (!book) throw bookNotFound(bookId);
  return book;
}

const BARE_BOOK = { reading: false, unsetWithoutProgress: false, emptyShelves: 'empty' } as const;

/** What fastify sends for an object; a cached page is sent as the same bytes with the same type. */
const JSON_TYPE = 'application/json; charset=utf-8';
const PAGE_CACHE_BYTES = 32 * 1024 * 1024;
const pageCaches = new WeakMap<Store, CatalogBytesCache>();

/**
 * Pages of the book list as sent, per user (a page holds only what they may see, with their own progress and shelves)
 * and query, until anything in the catalog changes (see CatalogBytesCache). `compute` reads in one snapshot. Single books are
 * not kept: each costs ~0.3 ms to build, the same book is rarely asked for twice between two changes (reading progress
 * is one), and keeping them made a stream of distinct books dearer and the daemon ~50 MB larger (docs/benchmarks.md).
 */
async function cachedPage(store: Store, principal: Principal, query: string, compute: () => Promise<unknown>): Promise<Buffer | string> {
  let cache = pageCaches.get(store);
  if (!cache) pageCaches.set(store, (cache = new CatalogBytesCache(PAGE_CACHE_BYTES)));
  const key = `${principal.userId} ${query}`;
  // The pages carry the user's progress and read status: reading state moves them too.
  const source = readingAware(store);
  const hit = cache.lookup(source, key);
  // Kept bytes are sent again as they are: their compressed forms are made once, not once per request.
  if (hit) return compressedOnce(hit.value);
  // Taken before the snapshot starts: a change committed meanwhile moves the generation, and the page is not kept.
  const since = cache.generationNow(source);
  const text = JSON.stringify(await compute());
  const kept = since ? cache.offer(source, key, since, text) : undefined;
  return kept ? compressedOnce(kept) : text;
}

function compressedOnce(bytes: Buffer): Buffer {
  keepCompressedCopies(bytes);
  return bytes;
}

const CreatePhysicalBookRequest = Type.Object({
  libraryId: Type.Integer(),
  isbn: nullable(Type.String()),
  title: nullable(Type.String()),
  authors: nullable(Type.Array(Type.String())),
  description: nullable(Type.String()),
  publisher: nullable(Type.String()),
  publishedDate: nullable(Type.String()),
  language: nullable(Type.String()),
  pageCount: nullable(Type.Integer()),
  categories: nullable(Type.Array(Type.String())),
  thumbnailUrl: nullable(Type.String()),
});

/** The book's primary file when it has one; 404 when that file is gone from disk. */
async function primaryFileOnDisk(ctx: DaemonContext, bookId: number): Promise<(LocatedFile & { path: string }) | undefined> {
  const files = await bookFiles(ctx.store.db, bookId);
  if (!files) throw bookNotFound(bookId);
  const primary = files.primary;
  if (!primary) return undefined;
  const path = primary.path;
  if (!path || !(await stat(path).catch(() => undefined))) throw new ApiError(404, `File not found: ${path ?? primary.fileName}`);
  return { ...primary, path };
}

/**
 * The format readers (EPUB, PDF, comics, audio, with their XML and archive libraries), loaded with the first request
 * that reads a book file's own metadata: the book list and its pages, what the web UI asks for first, do not need them
 * (loading them made a daemon's first page allocate ~9.6 MB, and they stayed in its heap).
 */
const fileMetadataReaders = (): Promise<typeof FileMetadataReaders> => import('../../core/books/file-metadata.ts');

function unreadable(error: unknown): never {
  if (error instanceof FormatError) throw badRequest(`Cannot read the book file: ${error.message}`);
  throw error;
}

export const bookRoutes: RouteSpec[] = [
  {
    method: 'GET',
    url: '/api/v1/books',
    auth: 'jwt',
    schema: { querystring: Type.Object({ withDescription: Type.Boolean({ default: false }), stripForListView: Type.Boolean({ default: true }) }) },
    handler: async (request, reply, ctx) => {
      const { withDescription, stripForListView } = request.query as { withDescription: boolean; stripForListView: boolean };
      const principal = principalOf(request);
      const ids = await visibleBookIds(ctx.store, principal);
      const chunks = bookArrayChunks(ctx.store, ids, bookView(principal, {
        listView: stripForListView,
        withDescription,
        user: { reading: true, unsetWithoutProgress: false, emptyShelves: withDescription ? 'empty' : 'omit' },
      }));
      return reply.type('application/json').send(Readable.from(chunks, { objectMode: false }));
    },
  },
  {
    method: 'GET',
    url: '/api/v1/books/page',
    auth: 'jwt',
    schema: { querystring: Type.Object({ page: Type.Optional(Type.String()), size: Type.Optional(Type.String()), sort: Type.Optional(Type.Array(Type.String())) }) },
    handler: async (request, reply, ctx) => {
      const query = request.query as { page?: string; size?: string; sort?: string[] };
      const principal = principalOf(request);
      const page = pageParam(query.page, 0, Number.MAX_SAFE_INTEGER);
      const size = pageParam(query.size, 20, 100) || 20;
      const sort = query.sort ?? [];
      const answer = await cachedPage(ctx.store, principal, `${page} ${size} ${JSON.stringify(sort)}`, () =>
        ctx.store.read(async (scope) => {
          let result;
          try {
            result = await pageOfVisibleBooks(ctx.store, principal, { page, size, sort }, scope);
          } catch (error) {
            if (error instanceof SortError) throw badRequest(error.message);
            throw error;
          }
          const content = await booksJson(ctx.store, result.ids, bookView(principal, {
            listView: true,
            withDescription: false,
            user: { reading: true, unsetWithoutProgress: false, emptyShelves: 'omit' },
          }), scope);
          return springPage(content, page, size, result.totalElements);
        }),
      );
      return reply.type(JSON_TYPE).send(answer);
    },
  },
  {
    method: 'GET',
    url: '/api/v1/books/batch',
    auth: 'jwt',
    schema: { querystring: Type.Object({ ...IdsQuery, withDescription: Type.Boolean({ default: false }) }) },
    handler: async (request, _reply, ctx) => {
      const query = request.query as { ids: string[]; withDescription: boolean };
      const principal = principalOf(request);
      const ids = idList(query.ids);
      const visible = await visibleAmong(ctx.store.db, principal, ids);
      return booksJson(ctx.store, [...visible].sort((a, b) => a - b), bookView(principal, {
        listView: false,
        withDescription: query.withDescription,
        user: { reading: true, unsetWithoutProgress: false, emptyShelves: 'empty' },
      }));
    },
  },
  {
    method: 'GET',
    url: '/api/v1/books/{bookId}',
    auth: 'jwt',
    schema: { params: BookParams, querystring: Type.Object({ withDescription: Type.Boolean({ default: false }) }) },
    handler: async (request, _reply, ctx) => {
      const { bookId } = request.params as { bookId: number };
      const { withDescription } = request.query as { withDescription: boolean };
      const principal = principalOf(request);
      await requireBookAccess(ctx, principal, bookId);
      return fullBook(ctx, principal, bookId, { withDescription, user: { reading: true, unsetWithoutProgress: true, emptyShelves: 'empty' } });
    },
  },
  {
    method: 'DELETE',
    url: '/api/v1/books',
    auth: 'jwt',
    rule: adminOr('canDeleteBook'),
    schema: { querystring: Type.Object(IdsQuery) },
    handler: async (request, _reply, ctx) => {
      const principal = principalOf(request);
      const ids = idList((request.query as { ids: string[] }).ids);
      const visible = await visibleAmong(ctx.store.db, principal, ids);
      const result = await deleteBooks(ctx.store.db, ctx.paths.covers, ids.filter((id) => visible.has(id)));
      if (result.deleted.length > 0) await audit(ctx, request, 'BOOK_DELETED', `Deleted ${result.deleted.length} book(s): ${result.deleted.join(', ')}`, result.deleted.length === 1 ? { type: 'Book', id: result.deleted[0] } : undefined);
      return result;
    },
  },
  {
    method: 'POST',
    url: '/api/v1/books/physical',
    auth: 'jwt',
    rule: adminOr('canManageLibrary'),
    schema: { body: CreatePhysicalBookRequest },
    handler: async (request, reply, ctx) => {
      const body = request.body as { libraryId: number } & Record<string, unknown>;
      const principal = principalOf(request);
      const library = await ctx.store.db.selectFrom('library').select('id').where('id', '=', body.libraryId).executeTakeFirst();
      if (!library) throw new ApiError(404, `Library not found with id: ${body.libraryId}`);
      await requireLibraryAccess(ctx, principal, body.libraryId);
      const bookId = await createPhysicalBook(ctx.store.db, body as Parameters<typeof createPhysicalBook>[1]);
      return reply.status(201).send(await fullBook(ctx, principal, bookId, { withDescription: true, user: BARE_BOOK }));
    },
  },
  {
    method: 'PATCH',
    url: '/api/v1/books/{bookId}/physical',
    auth: 'jwt',
    rule: adminOr('canManageLibrary'),
    schema: { params: BookParams, querystring: Type.Object({ physical: Type.Boolean() }) },
    handler: async (request, _reply, ctx) => {
      const { bookId } = request.params as { bookId: number };
      const { physical } = request.query as { physical: boolean };
      const principal = principalOf(request);
      await requireBookAccess(ctx, principal, bookId);
      await setPhysical(ctx.store.db, bookId, physical);
      return fullBook(ctx, principal, bookId, { withDescription: true, user: BARE_BOOK });
    },
  },
  {
    method: 'GET',
    url: '/api/v1/books/{bookId}/file-metadata',
    auth: 'jwt',
    schema: { params: BookParams },
    handler: async (request, _reply, ctx) => {
      const { bookId } = request.params as { bookId: number };
      await requireBookAccess(ctx, principalOf(request), bookId);
      const primary = await primaryFileOnDisk(ctx, bookId);
      if (!primary) throw badRequest('Book has no file to extract metadata from');
      const { fileMetadata } = await fileMetadataReaders();
      const metadata = await fileMetadata(primary).catch(unreadable);
      if (!metadata) throw badRequest(`No metadata reader for ${primary.fileName}`);
      return metadata;
    },
  },
  {
    method: 'GET',
    url: '/api/v1/books/{bookId}/cbx/metadata/comicinfo',
    auth: 'jwt',
    schema: { params: BookParams },
    handler: async (request, reply, ctx) => {
      const { bookId } = request.params as { bookId: number };
      await requireBookAccess(ctx, principalOf(request), bookId);
      const files = await bookFiles(ctx.store.db, bookId);
      // Grimmory answers 200 with an empty body when the book is not a comic.
      if (files?.primary?.bookType !== 'CBX') return reply.status(200).send();
      const primary = await primaryFileOnDisk(ctx, bookId);
      if (!primary) return reply.status(200).send();
      const { comicInfoMetadata } = await fileMetadataReaders();
      return comicInfoMetadata(primary.path).catch(unreadable);
    },
  },
];

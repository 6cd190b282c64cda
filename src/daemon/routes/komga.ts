// The Komga-compatible API (Grimmory's KomgaController) for Mihon/Tachiyomi and other Komga clients, mounted at
// `/komga/api/...`: the controller's paths plus what Komga clients call beyond them (collections by id, read progress
// onto the owner's Bindery progress, the filter lists). Clients sign in with HTTP Basic as an OPDS account; the owning
// user's visibility applies to everything. The app setting `komga_api_enabled` switches it on. See docs/komga.md.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { FastifyReply } from 'fastify';
import Type from 'typebox';
import type { Principal } from '../../core/auth/principal.ts';
import { isAdmin } from '../../core/auth/principal.ts';
import { bookFiles } from '../../core/books/file-locations.ts';
import { listedBookRow, visibleLibraries, type KomgaBookRow } from '../../core/komga/catalog.ts';
import { collectionCoverBook, collectionRow, findCollection } from '../../core/komga/collections.ts';
import { cleaned, collectionDto, instant, isCleanMode, JsonText, libraryDto, pageDto, pageOf, pageRequest, pagesCountOf, userDto, type Json } from '../../core/komga/dto.ts';
import { booksListPage, collectionsOfSeries, latestBooksPage, onDeckPage, seriesListPage, siblingBook } from '../../core/komga/lists.ts';
import { comicPage, comicPages, pdfPage, pdfPages, type PageImage, type PageInfo } from '../../core/komga/pages.ts';
import { parseProgression, ProgressionError, readProgression, writeProgression } from '../../core/komga/progression.ts';
import { authorNamesOf, authorsOf, authorsPage, namesOf } from '../../core/komga/referentials.ts';
import { SearchConditionError } from '../../core/komga/search-condition.ts';
import { endSession, sessionAccount, startSession } from '../../core/komga/sessions.ts';
import { epubManifest, epubPositions, POSITION_LIST_TYPE, PROGRESSION_TYPE, WEBPUB_TYPE } from '../../core/komga/webpub.ts';
import { comicPageDimensions } from '../../core/readers/comic-reader.ts';
import { epubBookInfo, epubEntry } from '../../core/readers/epub-reader.ts';
import { markBookProgress, markRead, markUnread } from '../../core/komga/read-progress.ts';
import { ReadingError } from '../../core/reading/reading-error.ts';
import { findSeries, seriesBookIds, type SeriesRef } from '../../core/komga/series.ts';
import {
  bookDtos,
  booksPage,
  collectionsPage,
  newSeriesPage,
  seriesBooks,
  seriesBooksPage,
  seriesDtoOf,
  seriesPage,
  tachiyomiProgress,
  updatedSeriesPage,
  type KomgaReader,
} from '../../core/komga/views.ts';
import { decideRange } from '../../core/media/byte-range.ts';
import { ifRangeHolds, isNotModified } from '../../core/media/conditional-requests.ts';
import { attachmentDisposition } from '../../core/media/content-types.ts';
import { coverResource } from '../../core/media/cover-media.ts';
import { planFileDownload } from '../../core/media/download-plan.ts';
import { placeholderCover } from '../../core/media/placeholder-cover.ts';
import { zipStream } from '../../core/media/zip-stream.ts';
import { readSetting } from '../../core/settings/app-settings.ts';
import type { OpdsSession } from '../../core/opds/users.ts';
import { filterRejection } from '../authenticate.ts';
import { FULL_AUTHENTICATION, signInAs, signInWithOpdsAccount, type BasicSignIn } from '../basic-auth.ts';
import { clearedCookies, sessionCookies, sessionToken } from '../komga-cookies.ts';
import type { DaemonContext } from '../context.ts';
import { ApiError } from '../http-errors.ts';
import type { RouteRequest, RouteSpec } from '../route-spec.ts';
import { loadSharp } from '../../core/covers/sharp-loader.ts';

const BASE = '/komga/api';
const REALM = 'Booklore Komga API';

interface Reader extends KomgaReader {
  session: OpdsSession;
  principal: Principal;
  clean: boolean;
  query: Record<string, unknown>;
}

function challenge(reply: FastifyReply, reason: string): FastifyReply {
  return reply.status(401).header('WWW-Authenticate', `Basic realm="${REALM}"`).type('text/plain;charset=utf-8').send(`HTTP Status 401 - ${reason}`);
}

const SWITCH = 'KOMGA_API_ENABLED';

/** Where the Komga API lives, and the path its cookies are set for. */
const apiRoot = (ctx: DaemonContext): string => `${ctx.config.basePath}/komga`;

/** A request without credentials signs in with its session cookie, if it has a live one. */
async function signInWithCookie(ctx: DaemonContext, token: string): Promise<BasicSignIn> {
  const account = await sessionAccount(ctx.store, token);
  return account ? signInAs(ctx, account, SWITCH) : { kind: 'challenge', reason: FULL_AUTHENTICATION };
}

/**
 * HTTP Basic against the OPDS accounts (or a session cookie from an earlier sign-in), then the switch (before
 * any password work), then the owner. Signing in to `GET /v2/users/me` with credentials starts a session,
 * as Komga's login does: Komelia sends its password there only, and the cookie afterwards.
 */
async function signIn(request: RouteRequest, reply: FastifyReply, ctx: DaemonContext): Promise<Reader | undefined> {
  const token = request.headers.authorization ? undefined : sessionToken(request.headers.cookie);
  const outcome = token !== undefined ? await signInWithCookie(ctx, token) : await signInWithOpdsAccount(request, ctx, SWITCH);
  if (outcome.kind === 'blocked') {
    reply.header('Retry-After', '900').header('WWW-Authenticate', `Basic realm="${REALM}"`);
    reply.status(429).type('text/plain;charset=utf-8').send('HTTP Status 429 - Too many failed sign-ins; try again later.');
    return undefined;
  }
  if (outcome.kind === 'challenge') {
    challenge(reply, outcome.reason);
    return undefined;
  }
  if (outcome.kind === 'disabled') {
    filterRejection(reply, request, 403);
    return undefined;
  }
  const query = (request.query ?? {}) as Record<string, unknown>;
  if (token === undefined && request.method === 'GET' && request.url.split('?')[0] === `${apiRoot(ctx)}/api/v2/users/me`) {
    const started = await startSession(ctx.store, outcome.session.opdsUserId);
    const remember = query['remember-me'] === 'true' || query['remember-me'] === '';
    if (started) reply.header('Set-Cookie', sessionCookies(started, apiRoot(ctx), remember, request.protocol === 'https'));
  }
  return {
    session: outcome.session,
    principal: outcome.principal,
    store: ctx.store,
    clean: isCleanMode(query),
    groupUnknown: (await readSetting(ctx.store.db, 'KOMGA_GROUP_UNKNOWN')) !== false,
    links: { apiRoot: apiRoot(ctx) },
    query,
  };
}

/** Sends JSON; an answer already written as JSON as it is (in clean mode, read back and cleaned). */
async function sendJson(reply: FastifyReply, reader: Reader, answer: Json | JsonText | Promise<Json | JsonText>, type = 'application/json'): Promise<FastifyReply> {
  const body = await answer;
  const text = body instanceof JsonText ? (reader.clean ? JSON.stringify(cleaned(JSON.parse(body.text) as Json)) : body.text) : JSON.stringify(reader.clean ? cleaned(body) : body);
  return reply.type(type).header('Cache-Control', 'no-cache, private').send(text);
}

/** A search body Komga would refuse is a 400 with the reason. */
async function searchAnswer(build: () => Promise<Json | JsonText>): Promise<Json | JsonText> {
  try {
    return await build();
  } catch (error) {
    if (error instanceof SearchConditionError) throw new ApiError(400, error.message);
    throw error;
  }
}

type Handler = (reader: Reader, request: RouteRequest, reply: FastifyReply, ctx: DaemonContext) => Promise<unknown> | unknown;

/** Path parameters are taken as strings: a malformed id names nothing, so the handler answers 404 rather than 400. */
function paramsSchema(url: string): RouteSpec['schema'] {
  const names = [...url.matchAll(/\{(\*?)(\w+)\}/g)].map((m) => (m[1] === '*' ? '*' : (m[2] as string)));
  return names.length === 0 ? {} : { params: Type.Object(Object.fromEntries(names.map((n) => [n, Type.String()]))) };
}

function route(url: string, handler: Handler, method: RouteSpec['method'] = 'GET'): RouteSpec {
  return {
    method,
    url: `${BASE}${url}`,
    auth: 'custom',
    schema: paramsSchema(url),
    handler: async (request, reply, ctx) => {
      const reader = await signIn(request, reply, ctx);
      if (!reader) return reply;
      return handler(reader, request, reply, ctx);
    },
  };
}

const paramOf = (request: RouteRequest, name: string): string => String((request.params as Record<string, unknown>)[name] ?? '');

/** A numeric path id, or 404 (Komga ids are strings; anything else names nothing here). */
function numericId(request: RouteRequest, name: string): number {
  const text = paramOf(request, name);
  if (!/^\d{1,15}$/.test(text)) throw new ApiError(404, `Book not found with ID: ${text}`);
  return Number(text);
}

async function seriesOf(reader: Reader, request: RouteRequest): Promise<SeriesRef> {
  const id = paramOf(request, 'seriesId');
  const series = await findSeries(reader.store, reader.principal, id, reader.groupUnknown);
  if (!series) throw new ApiError(404, `Series not found: ${id}`);
  return series;
}

/** The book if the reader may see it (and it is listed: not deleted, not physical); a hidden book is as absent as a missing one. */
async function visibleBook(reader: Reader, bookId: number): Promise<KomgaBookRow> {
  const row = await listedBookRow(reader.store, reader.principal, bookId);
  if (!row) throw new ApiError(404, `Book not found with ID: ${bookId}`);
  return row;
}

async function sendCover(request: RouteRequest, reply: FastifyReply, ctx: DaemonContext, bookId: number | undefined): Promise<FastifyReply> {
  let image = bookId === undefined ? undefined : await coverResource(ctx.store.db, ctx.paths.covers, bookId, 'book', 'thumbnail');
  if (image?.kind === 'placeholder' && bookId !== undefined) image = await coverResource(ctx.store.db, ctx.paths.covers, bookId, 'audiobook', 'thumbnail');
  if (!image || image.kind === 'placeholder') {
    const data = image?.kind === 'placeholder' ? image.data : await placeholderCover();
    return reply.type('image/jpeg').header('Cache-Control', 'private, max-age=3600').header('Content-Length', data.length).send(data);
  }
  reply.type('image/jpeg').header('ETag', image.etag).header('Last-Modified', image.lastModified.toUTCString()).header('Cache-Control', 'private, max-age=3600');
  if (isNotModified(request.headers['if-none-match'], request.headers['if-modified-since'], image.etag, image.lastModified)) return reply.status(304).send();
  return reply.header('Content-Length', image.size).send(createReadStream(image.path));
}

/** The primary file's path and type, for pages. */
async function readableFile(ctx: DaemonContext, bookId: number): Promise<{ path: string; kind: 'comic' | 'pdf' } | undefined> {
  const files = await bookFiles(ctx.store.db, bookId);
  const candidates = [files?.primary, ...(files?.files ?? [])].filter((f) => f !== undefined && f.isBook && !f.folderBased && f.path !== undefined);
  const file = candidates.find((f) => f?.bookType === 'CBX' || f?.bookType === 'PDF');
  if (!file?.path) return undefined;
  const info = await stat(file.path).catch(() => undefined);
  if (!info?.isFile()) return undefined;
  return { path: file.path, kind: file.bookType === 'CBX' ? 'comic' : 'pdf' };
}

async function pagesOf(ctx: DaemonContext, bookId: number): Promise<PageInfo[]> {
  const file = await readableFile(ctx, bookId);
  if (!file) return [];
  try {
    return file.kind === 'comic' ? await comicPages(file.path) : await pdfPages(file.path);
  } catch {
    return [];
  }
}

/** Page `number` (1-based) of a comic or PDF, or undefined when there is no such page. */
async function pageImage(ctx: DaemonContext, bookId: number, number: number, format: 'jpeg' | 'png'): Promise<PageImage | undefined> {
  const file = await readableFile(ctx, bookId);
  if (!file || number < 1) return undefined;
  try {
    return file.kind === 'comic' ? await comicPage(file.path, number) : await pdfPage(file.path, number, format);
  } catch {
    return undefined;
  }
}

/** The book's EPUB file (its primary file, else its first EPUB), or a 404. */
async function epubFileOf(ctx: DaemonContext, bookId: number): Promise<{ id: number; path: string }> {
  const files = await bookFiles(ctx.store.db, bookId);
  const file = [files?.primary, ...(files?.files ?? [])].find((f) => f !== undefined && f.isBook && !f.folderBased && f.bookType === 'EPUB' && f.path !== undefined);
  const info = file?.path === undefined ? undefined : await stat(file.path).catch(() => undefined);
  if (!file?.path || !info?.isFile()) throw new ApiError(404, `Book ${bookId} has no EPUB file to read`);
  return { id: file.id, path: file.path };
}

async function epubInfoOf(ctx: DaemonContext, bookId: number) {
  const file = await epubFileOf(ctx, bookId);
  try {
    return { file, info: await epubBookInfo(file.path) };
  } catch {
    throw new ApiError(404, `The EPUB of book ${bookId} cannot be read`);
  }
}

/** A JSON request body as an object; anything else is a 400. */
function bodyObject(request: RouteRequest): Record<string, unknown> {
  const body = request.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ApiError(400, 'A JSON object is required');
  return body as Record<string, unknown>;
}

/** The page count Komga's read progress counts in: the known count, else the pages of the comic or PDF itself. */
async function pagesCountFor(ctx: DaemonContext, row: KomgaBookRow): Promise<number> {
  const known = pagesCountOf(row);
  return known > 0 ? known : (await pagesOf(ctx, row.id)).length;
}

async function markProgress(reader: Reader, ctx: DaemonContext, row: KomgaBookRow, body: Record<string, unknown>): Promise<void> {
  const { page, completed } = body;
  if (page !== undefined && page !== null && (typeof page !== 'number' || !Number.isInteger(page) || page < 0)) throw new ApiError(400, 'page must be a whole number');
  if (completed !== undefined && completed !== null && typeof completed !== 'boolean') throw new ApiError(400, 'completed must be true or false');
  const files = await bookFiles(ctx.store.db, row.id);
  const target = { bookId: row.id, primaryFileId: files?.primary?.id, bookType: files?.primary?.bookType ?? row.bookType, pagesCount: await pagesCountFor(ctx, row) };
  try {
    await markBookProgress(reader.store, reader.principal.userId, target, { page: typeof page === 'number' ? page : undefined, completed: completed === true ? true : completed === false ? false : undefined });
  } catch (error) {
    if (error instanceof ReadingError) throw new ApiError(error.code === 'BOOK_NOT_FOUND' || error.code === 'FILE_NOT_FOUND' ? 404 : 400, error.message);
    throw error;
  }
}

const pageNumberOf = (text: string): number => (/^\d{1,6}$/.test(text) ? Number(text) : 0);

const seriesBookIdsOf = async (reader: Reader, ref: SeriesRef): Promise<number[]> => (await seriesBookIds(reader.store, reader.principal, ref, [], 'all')).ids;

export const komgaRoutes: RouteSpec[] = [
  // Komga's sign-out (GET or POST): ends the session the cookie names.
  ...(['GET', 'POST'] as const).map((method) =>
    route(
      '/logout',
      async (_reader, request, reply, ctx) => {
        const token = sessionToken(request.headers.cookie);
        if (token !== undefined) await endSession(ctx.store, token);
        return reply.header('Set-Cookie', clearedCookies(apiRoot(ctx), request.protocol === 'https')).status(204).send();
      },
      method,
    ),
  ),

  route('/v2/users/me', async (reader, _request, reply) =>
    sendJson(reply, reader, userDto(reader.session.opdsUserId, reader.session.username, isAdmin(reader.principal) ? 'all' : reader.principal.libraryIds)),
  ),

  route('/v1/libraries', async (reader, _request, reply) => sendJson(reply, reader, (await visibleLibraries(reader.store, reader.principal)).map(libraryDto))),

  route('/v1/libraries/{libraryId}', async (reader, request, reply) => {
    const id = paramOf(request, 'libraryId');
    const library = (await visibleLibraries(reader.store, reader.principal)).find((l) => String(l.id) === id);
    if (!library) throw new ApiError(404, `Library not found with ID: ${id}`);
    return sendJson(reply, reader, libraryDto(library));
  }),

  route('/v1/series', async (reader, _request, reply) => sendJson(reply, reader, seriesPage(reader, reader.query))),

  route('/v1/series/{seriesId}', async (reader, request, reply) => sendJson(reply, reader, seriesDtoOf(reader, await seriesOf(reader, request)))),

  route('/v1/series/{seriesId}/books', async (reader, request, reply) => sendJson(reply, reader, seriesBooksPage(reader, await seriesOf(reader, request), reader.query))),

  route('/v1/series/{seriesId}/thumbnail', async (reader, request, reply, ctx) => {
    const ref = await seriesOf(reader, request);
    return sendCover(request, reply, ctx, (await seriesBookIds(reader.store, reader.principal, ref, [], { offset: 0, limit: 1 })).ids[0]);
  }),

  route(
    '/v1/series/{seriesId}/read-progress',
    async (reader, request, reply) => {
      await markRead(reader.store, reader.principal.userId, await seriesBookIdsOf(reader, await seriesOf(reader, request)));
      return reply.status(204).send();
    },
    'POST',
  ),

  route(
    '/v1/series/{seriesId}/read-progress',
    async (reader, request, reply) => {
      await markUnread(reader.store, reader.principal.userId, await seriesBookIdsOf(reader, await seriesOf(reader, request)));
      return reply.status(204).send();
    },
    'DELETE',
  ),

  route('/v2/series/{seriesId}/read-progress/tachiyomi', async (reader, request, reply) => sendJson(reply, reader, tachiyomiProgress(reader, await seriesOf(reader, request)))),

  route(
    '/v2/series/{seriesId}/read-progress/tachiyomi',
    async (reader, request, reply) => {
      const ref = await seriesOf(reader, request);
      const last = bodyObject(request).lastBookNumberSortRead;
      if (typeof last !== 'number' || !Number.isFinite(last)) throw new ApiError(400, 'lastBookNumberSortRead must be a number');
      const upTo = (await seriesBooks(reader, ref)).filter((b) => b.numberSort <= last && b.state !== 'READ');
      await markRead(reader.store, reader.principal.userId, upTo.map((b) => b.id));
      return reply.status(204).send();
    },
    'PUT',
  ),

  route('/v1/books', async (reader, _request, reply) => sendJson(reply, reader, booksPage(reader, reader.query))),

  route('/v1/books/{bookId}', async (reader, request, reply) => sendJson(reply, reader, (await bookDtos(reader, [await visibleBook(reader, numericId(request, 'bookId'))]))[0] as Json)),

  route(
    '/v1/books/{bookId}/read-progress',
    async (reader, request, reply, ctx) => {
      const row = await visibleBook(reader, numericId(request, 'bookId'));
      await markProgress(reader, ctx, row, bodyObject(request));
      return reply.status(204).send();
    },
    'PATCH',
  ),

  route(
    '/v1/books/{bookId}/read-progress',
    async (reader, request, reply) => {
      await markUnread(reader.store, reader.principal.userId, [(await visibleBook(reader, numericId(request, 'bookId'))).id]);
      return reply.status(204).send();
    },
    'DELETE',
  ),

  route('/v1/books/{bookId}/thumbnail', async (reader, request, reply, ctx) => sendCover(request, reply, ctx, (await visibleBook(reader, numericId(request, 'bookId'))).id)),

  route('/v1/books/{bookId}/pages', async (reader, request, reply, ctx) => {
    const row = await visibleBook(reader, numericId(request, 'bookId'));
    const pages = await pagesOf(ctx, row.id);
    const file = pages.length > 0 ? await readableFile(ctx, row.id) : undefined;
    // Sizes in pixels come from each page's image header (read once per file version, then remembered), for zip
    // comics only: a RAR or 7z page costs an extraction each, and Komga's sizes may be null.
    const dimensions = file?.kind === 'comic' && /\.(cbz|zip)$/i.test(file.path) ? await comicPageDimensions(file.path).catch(() => []) : [];
    return sendJson(
      reply,
      reader,
      pages.map((p) => pageDto(p, dimensions[p.number - 1])),
    );
  }),

  route('/v1/books/{bookId}/pages/{pageNumber}', async (reader, request, reply, ctx) => {
    const row = await visibleBook(reader, numericId(request, 'bookId'));
    const numberText = paramOf(request, 'pageNumber');
    const png = reader.query.convert === 'png';
    const image = await pageImage(ctx, row.id, pageNumberOf(numberText), png ? 'png' : 'jpeg');
    if (!image) throw new ApiError(404, `Page ${numberText} not found in book: ${row.id}`);
    let { data, mime } = image;
    if (png && mime !== 'image/png') {
      const sharp = await loadSharp();
      data = await sharp(data, { limitInputPixels: 268_402_689 }).rotate().png().toBuffer();
      mime = 'image/png';
    }
    return reply.type(mime).header('Cache-Control', 'private, max-age=86400').header('Content-Length', data.length).send(data);
  }),

  route('/v1/books/{bookId}/file', async (reader, request, reply, ctx) => {
    const row = await visibleBook(reader, numericId(request, 'bookId'));
    const files = await bookFiles(ctx.store.db, row.id);
    const plan = await planFileDownload(files?.primary);
    if (plan.kind === 'missing') throw new ApiError(404, `File not found for book: ${row.id}`);
    reply.header('Content-Disposition', attachmentDisposition(plan.fileName)).header('Cache-Control', 'no-cache, private');
    if (plan.kind === 'zip') return reply.type('application/zip').send(zipStream(plan.entries));
    const etag = `"${plan.size.toString(36)}-${Math.trunc(plan.mtime.getTime()).toString(36)}"`;
    reply.header('Accept-Ranges', 'bytes').header('ETag', etag).header('Last-Modified', plan.mtime.toUTCString());
    const headers = request.headers;
    if (isNotModified(headers['if-none-match'], headers['if-modified-since'], etag, plan.mtime)) return reply.status(304).send();
    const range = decideRange(ifRangeHolds(headers['if-range'] as string | undefined, etag, plan.mtime) ? headers.range : undefined, plan.size);
    const type = 'application/octet-stream';
    if (range.kind === 'unsatisfiable') return reply.status(416).header('Content-Range', `bytes */${plan.size}`).send();
    if (range.kind === 'partial') {
      return reply
        .status(206)
        .type(type)
        .header('Content-Range', `bytes ${range.start}-${range.end}/${plan.size}`)
        .header('Content-Length', range.end - range.start + 1)
        .send(createReadStream(plan.path, { start: range.start, end: range.end }));
    }
    return reply.type(type).header('Content-Length', plan.size).send(createReadStream(plan.path));
  }),

  route('/v1/collections', async (reader, _request, reply) => sendJson(reply, reader, collectionsPage(reader, reader.query))),

  route('/v1/collections/{collectionId}', async (reader, request, reply) => {
    const id = paramOf(request, 'collectionId');
    const collection = await findCollection(reader.store, reader.principal, id);
    if (!collection) throw new ApiError(404, `Collection not found: ${id}`);
    return sendJson(reply, reader, collectionDto(await collectionRow(reader.store, reader.principal, collection, reader.groupUnknown)));
  }),

  route('/v1/collections/{collectionId}/thumbnail', async (reader, request, reply, ctx) => {
    const id = paramOf(request, 'collectionId');
    const collection = await findCollection(reader.store, reader.principal, id);
    if (!collection) throw new ApiError(404, `Collection not found: ${id}`);
    return sendCover(request, reply, ctx, await collectionCoverBook(reader.store, reader.principal, collection));
  }),

  route('/v1/collections/{collectionId}/series', async (reader, request, reply) => {
    const id = paramOf(request, 'collectionId');
    const collection = await findCollection(reader.store, reader.principal, id);
    if (!collection) throw new ApiError(404, `Collection not found: ${id}`);
    return sendJson(reply, reader, seriesPage(reader, reader.query, collection));
  }),

  // Read lists: Bindery has none; an empty page keeps Mihon's "read lists" type filter working.
  route('/v1/readlists', async (reader, _request, reply) => sendJson(reply, reader, pageOf([], pageRequest(reader.query)))),

  route('/v1/genres', async (reader, _request, reply) => sendJson(reply, reader, namesOf(reader, 'genres', reader.query))),
  route('/v1/tags', async (reader, _request, reply) => sendJson(reply, reader, namesOf(reader, 'tags', reader.query))),
  route('/v1/publishers', async (reader, _request, reply) => sendJson(reply, reader, namesOf(reader, 'publishers', reader.query))),
  route('/v1/authors', async (reader, _request, reply) => sendJson(reply, reader, authorsOf(reader, reader.query))),
  route('/v2/authors', async (reader, _request, reply) => sendJson(reply, reader, authorsPage(reader, reader.query))),
  route('/v1/authors/names', async (reader, _request, reply) => sendJson(reply, reader, authorNamesOf(reader, reader.query))),
  route('/v1/authors/roles', async (reader, _request, reply) => sendJson(reply, reader, ['writer'])),
  route('/v1/languages', async (reader, _request, reply) => sendJson(reply, reader, namesOf(reader, 'languages', reader.query))),
  route('/v1/age-ratings', async (reader, _request, reply) => sendJson(reply, reader, namesOf(reader, 'ageRatings', reader.query))),
  route('/v1/series/release-dates', async (reader, _request, reply) => sendJson(reply, reader, namesOf(reader, 'releaseYears', reader.query))),
  // Bindery's series carry no sharing labels.
  route('/v1/sharing-labels', async (reader, _request, reply) => sendJson(reply, reader, [])),
  route('/v1/tags/book', async (reader, _request, reply) => sendJson(reply, reader, namesOf(reader, 'tags', reader.query))),
  route('/v1/tags/series', async (reader, _request, reply) => sendJson(reply, reader, namesOf(reader, 'tags', reader.query))),

  // Komelia's lists: search bodies, and the home screen's recent lists.
  route('/v1/series/list', async (reader, request, reply) => sendJson(reply, reader, searchAnswer(() => seriesListPage(reader, request.body, reader.query))), 'POST'),
  route('/v1/books/list', async (reader, request, reply) => sendJson(reply, reader, searchAnswer(() => booksListPage(reader, request.body, reader.query))), 'POST'),
  route('/v1/books/latest', async (reader, _request, reply) => sendJson(reply, reader, latestBooksPage(reader, reader.query))),
  route('/v1/books/ondeck', async (reader, _request, reply) => sendJson(reply, reader, onDeckPage(reader, reader.query))),
  route('/v1/series/new', async (reader, _request, reply) => sendJson(reply, reader, newSeriesPage(reader, reader.query))),
  route('/v1/series/updated', async (reader, _request, reply) => sendJson(reply, reader, updatedSeriesPage(reader, reader.query))),

  route('/v1/series/{seriesId}/collections', async (reader, request, reply) => sendJson(reply, reader, collectionsOfSeries(reader, (await seriesOf(reader, request)).id))),
  // Read lists: Bindery has none.
  route('/v1/books/{bookId}/readlists', async (reader, request, reply) => {
    await visibleBook(reader, numericId(request, 'bookId'));
    return sendJson(reply, reader, []);
  }),
  ...(['previous', 'next'] as const).map((direction) =>
    route(`/v1/books/{bookId}/${direction}`, async (reader, request, reply) => {
      const sibling = await siblingBook(reader, await visibleBook(reader, numericId(request, 'bookId')), direction);
      if (!sibling) throw new ApiError(404, `No ${direction} book in the series`);
      return sendJson(reply, reader, (await bookDtos(reader, [sibling]))[0] as Json);
    }),
  ),

  route('/v1/books/{bookId}/pages/{pageNumber}/thumbnail', async (reader, request, reply, ctx) => {
    const row = await visibleBook(reader, numericId(request, 'bookId'));
    const numberText = paramOf(request, 'pageNumber');
    const image = await pageImage(ctx, row.id, pageNumberOf(numberText), 'jpeg');
    if (!image) throw new ApiError(404, `Page ${numberText} not found in book: ${row.id}`);
    const sharp = await loadSharp();
    const data = await sharp(image.data, { limitInputPixels: 268_402_689 }).rotate().resize(300, 300, { fit: 'inside', withoutEnlargement: true }).jpeg({ quality: 85 }).toBuffer();
    return reply.type('image/jpeg').header('Cache-Control', 'private, max-age=86400').header('Content-Length', data.length).send(data);
  }),

  // The EPUB reader (Readium): manifest, positions, progression, and the resources the manifest points to.
  // The manifest, and its EPUB-only spelling (only EPUBs have one here).
  ...['/v1/books/{bookId}/manifest', '/v1/books/{bookId}/manifest/epub'].map((url) =>
    route(url, async (reader, request, reply, ctx) => {
      const row = await visibleBook(reader, numericId(request, 'bookId'));
      const { info } = await epubInfoOf(ctx, row.id);
      const seriesTitle = ((await bookDtos(reader, [row]))[0] as { seriesTitle: string }).seriesTitle;
      // Absolute links, as Komga's: Komelia's reader loads only URLs that start with the server address it was given.
      const links = { apiRoot: `${request.protocol}://${request.host}${apiRoot(ctx)}` };
      return sendJson(reply, reader, epubManifest({ row, seriesTitle, modified: instant(row.addedOn) }, info, links), WEBPUB_TYPE);
    }),
  ),

  route('/v1/books/{bookId}/positions', async (reader, request, reply, ctx) => {
    const row = await visibleBook(reader, numericId(request, 'bookId'));
    const positions = epubPositions((await epubInfoOf(ctx, row.id)).info);
    return sendJson(reply, reader, { total: positions.length, positions } as unknown as Json, POSITION_LIST_TYPE);
  }),

  route('/v1/books/{bookId}/progression', async (reader, request, reply, ctx) => {
    const row = await visibleBook(reader, numericId(request, 'bookId'));
    const progression = await readProgression(reader.store, reader.principal.userId, row.id, epubPositions((await epubInfoOf(ctx, row.id)).info));
    if (!progression) return reply.status(204).send();
    return sendJson(reply, reader, progression as unknown as Json, PROGRESSION_TYPE);
  }),

  route(
    '/v1/books/{bookId}/progression',
    async (reader, request, reply, ctx) => {
      const row = await visibleBook(reader, numericId(request, 'bookId'));
      const { file, info } = await epubInfoOf(ctx, row.id);
      try {
        await writeProgression(reader.store, reader.principal.userId, { bookId: row.id, fileId: file.id, positions: epubPositions(info) }, parseProgression(request.body));
      } catch (error) {
        if (error instanceof ProgressionError) throw new ApiError(error.status, error.message);
        throw error;
      }
      return reply.status(204).send();
    },
    'PUT',
  ),

  route('/v1/books/{bookId}/resource/{*resource}', async (reader, request, reply, ctx) => {
    const row = await visibleBook(reader, numericId(request, 'bookId'));
    const { file } = await epubInfoOf(ctx, row.id);
    const requested = paramOf(request, '*');
    // Only the EPUB's own manifest items are served: a path climbing out of the archive names nothing.
    const entry = await epubEntry(file.path, requested).catch(() => undefined);
    if (!entry) throw new ApiError(404, `Resource not found in book ${row.id}: ${requested}`);
    return reply
      .type(entry.mediaType)
      .header('Content-Security-Policy', "script-src 'none'; object-src 'none';")
      .header('Content-Disposition', `inline; filename*=UTF-8''${encodeURIComponent(requested.split('/').pop() ?? 'resource')}`)
      .header('Cache-Control', 'private, max-age=86400')
      .header('Content-Length', entry.data.length)
      .send(entry.data);
  }),

  // Komga's live events (outside /api, as in Komga): the stream stays open; see docs/live-updates.md.
  {
    ...route('', async (reader, _request, reply, ctx) => {
      const { openKomgaStream } = await import('../live/komga-sse.ts');
      return openKomgaStream(ctx, reply, reader.principal.userId, String(reader.session.opdsUserId));
    }),
    url: '/komga/sse/v1/events',
  },
];

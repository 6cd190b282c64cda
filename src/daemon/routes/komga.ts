// The Komga-compatible API (Grimmory's KomgaController) for Mihon/Tachiyomi and other Komga clients, mounted at
// `/komga/api/...`. Clients sign in with HTTP Basic as an OPDS account; the owning user's visibility applies to
// everything. The app setting `komga_api_enabled` switches it on. See docs/komga.md.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { FastifyReply } from 'fastify';
import Type from 'typebox';
import { FailureLimit } from '../../core/auth/login-rate-limit.ts';
import { isAdmin, loadPrincipal, type Principal } from '../../core/auth/principal.ts';
import { bookAccessNow } from '../../core/auth/visibility.ts';
import { bookFiles } from '../../core/books/file-locations.ts';
import { findSeries, groupSeries, loadBookRows, visibleBooks, visibleLibraries, visibleShelves, type KomgaBookRow, type KomgaSeries } from '../../core/komga/catalog.ts';
import {
  bookDto,
  cleaned,
  collectionDto,
  humanSize,
  isCleanMode,
  libraryDto,
  pageOf,
  pageRequest,
  seriesContext,
  seriesDto,
  userDto,
  type Json,
  type Links,
} from '../../core/komga/dto.ts';
import { comicPage, comicPages, pdfPage, pdfPages, type PageInfo } from '../../core/komga/pages.ts';
import { decideRange } from '../../core/media/byte-range.ts';
import { ifRangeHolds, isNotModified } from '../../core/media/conditional-requests.ts';
import { attachmentDisposition } from '../../core/media/content-types.ts';
import { coverResource } from '../../core/media/cover-media.ts';
import { planFileDownload } from '../../core/media/download-plan.ts';
import { placeholderCover } from '../../core/media/placeholder-cover.ts';
import { zipStream } from '../../core/media/zip-stream.ts';
import { checkOpdsCredentials, CredentialCache, parseBasic, type OpdsSession } from '../../core/opds/users.ts';
import { readSetting } from '../../core/settings/app-settings.ts';
import { filterRejection } from '../authenticate.ts';
import type { DaemonContext } from '../context.ts';
import { ApiError } from '../http-errors.ts';
import type { RouteRequest, RouteSpec } from '../route-spec.ts';

const BASE = '/komga/api';
const REALM = 'Booklore Komga API';

interface KomgaState {
  credentials: CredentialCache;
  failures: FailureLimit;
}

const states = new WeakMap<DaemonContext, KomgaState>();

function stateOf(ctx: DaemonContext): KomgaState {
  let state = states.get(ctx);
  if (!state) {
    state = { credentials: new CredentialCache(), failures: new FailureLimit({ maxFailures: 30, windowMs: 15 * 60 * 1000, maxKeys: 1000, now: Date.now }) };
    states.set(ctx, state);
  }
  return state;
}

interface Reader {
  session: OpdsSession;
  principal: Principal;
  clean: boolean;
  groupUnknown: boolean;
  links: Links;
  query: Record<string, unknown>;
}

function challenge(reply: FastifyReply, reason: string): FastifyReply {
  return reply.status(401).header('WWW-Authenticate', `Basic realm="${REALM}"`).type('text/plain;charset=utf-8').send(`HTTP Status 401 - ${reason}`);
}

/** HTTP Basic against the OPDS accounts, then the switch (after authentication, as in Grimmory), then the owner. */
async function signIn(request: RouteRequest, reply: FastifyReply, ctx: DaemonContext): Promise<Reader | undefined> {
  const state = stateOf(ctx);
  const header = request.headers.authorization;
  const key = `${request.ip ?? 'unknown'}|${parseBasic(header)?.username.toLowerCase() ?? ''}`;
  if (state.failures.isBlocked(key)) {
    reply.header('Retry-After', '900').header('WWW-Authenticate', `Basic realm="${REALM}"`);
    reply.status(429).type('text/plain;charset=utf-8').send('HTTP Status 429 - Too many failed sign-ins; try again later.');
    return undefined;
  }
  const result = await checkOpdsCredentials(ctx.store.db, state.credentials, header);
  if (typeof result === 'string') {
    if (result !== 'MISSING') state.failures.recordFailure(key);
    challenge(reply, result === 'MISSING' ? 'Full authentication is required to access this resource' : 'Bad credentials');
    return undefined;
  }
  state.failures.reset(key);
  if ((await readSetting(ctx.store.db, 'KOMGA_API_ENABLED')) !== true) {
    filterRejection(reply, request, 403);
    return undefined;
  }
  const principal = await loadPrincipal(ctx.store.db, result.ownerId);
  if (!principal) {
    challenge(reply, 'Bad credentials');
    return undefined;
  }
  const query = (request.query ?? {}) as Record<string, unknown>;
  return {
    session: result,
    principal,
    clean: isCleanMode(query),
    groupUnknown: (await readSetting(ctx.store.db, 'KOMGA_GROUP_UNKNOWN')) !== false,
    links: { apiRoot: `${ctx.config.basePath}/komga` },
    query,
  };
}

function sendJson(reply: FastifyReply, reader: Reader, body: Json): FastifyReply {
  return reply.type('application/json').header('Cache-Control', 'no-cache, private').send(JSON.stringify(reader.clean ? cleaned(body) : body));
}

type Handler = (reader: Reader, request: RouteRequest, reply: FastifyReply, ctx: DaemonContext) => Promise<unknown> | unknown;

/** Path parameters are taken as strings: a malformed id names nothing, so the handler answers 404 rather than 400. */
function paramsSchema(url: string): RouteSpec['schema'] {
  const names = [...url.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
  return names.length === 0 ? {} : { params: Type.Object(Object.fromEntries(names.map((n) => [n, Type.String()]))) };
}

function route(url: string, handler: Handler): RouteSpec {
  return {
    method: 'GET',
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

/** Comma-separated or repeated `library_id` values; undefined when absent. */
function libraryFilter(query: Record<string, unknown>): number[] | undefined {
  const raw = query.library_id;
  if (raw === undefined) return undefined;
  const values = (Array.isArray(raw) ? raw : [raw]).flatMap((v) => String(v).split(','));
  return values.filter((v) => /^\d{1,15}$/.test(v.trim())).map((v) => Number(v.trim()));
}

/** A numeric path id, or 404 (Komga ids are strings; anything else names nothing here). */
function numericId(request: RouteRequest, name: string): number {
  const text = paramOf(request, name);
  if (!/^\d{1,15}$/.test(text)) throw new ApiError(404, `Book not found with ID: ${text}`);
  return Number(text);
}

function seriesOf(reader: Reader, ctx: DaemonContext, request: RouteRequest): KomgaSeries {
  const id = paramOf(request, 'seriesId');
  const series = findSeries(ctx.store, reader.principal, id, reader.groupUnknown);
  if (!series) throw new ApiError(404, `Series not found: ${id}`);
  return series;
}

/** The book if the reader may see it; a hidden book is as absent as a missing one. */
function visibleBook(reader: Reader, ctx: DaemonContext, bookId: number): KomgaBookRow {
  const access = bookAccessNow(ctx.store, reader.principal, bookId);
  const row = access === 'ok' ? loadBookRows(ctx.store, [bookId])[0] : undefined;
  if (!row || ctx.store.sqlite.prepare('SELECT deleted FROM book WHERE id = ?').pluck().get(bookId) === 1) throw new ApiError(404, `Book not found with ID: ${bookId}`);
  return row;
}

/** The series a single book belongs to, computed over the books of its library the reader can see. */
function seriesOfBook(reader: Reader, ctx: DaemonContext, row: KomgaBookRow): KomgaSeries {
  const all = groupSeries(visibleBooks(ctx.store, reader.principal, [row.libraryId]), reader.groupUnknown);
  const found = all.find((s) => s.books.some((b) => b.id === row.id));
  return found ?? { id: `${row.libraryId}-`, libraryId: row.libraryId, name: '', books: [row] };
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

export const komgaRoutes: RouteSpec[] = [
  route('/v2/users/me', (reader, _request, reply) =>
    sendJson(reply, reader, userDto(reader.session.opdsUserId, reader.session.username, isAdmin(reader.principal) ? 'all' : reader.principal.libraryIds)),
  ),

  route('/v1/libraries', (reader, _request, reply, ctx) => sendJson(reply, reader, visibleLibraries(ctx.store, reader.principal).map(libraryDto))),

  route('/v1/libraries/{libraryId}', (reader, request, reply, ctx) => {
    const id = paramOf(request, 'libraryId');
    const library = visibleLibraries(ctx.store, reader.principal).find((l) => String(l.id) === id);
    if (!library) throw new ApiError(404, `Library not found with ID: ${id}`);
    return sendJson(reply, reader, libraryDto(library));
  }),

  route('/v1/series', (reader, _request, reply, ctx) => {
    const libraries = libraryFilter(reader.query);
    const series = groupSeries(visibleBooks(ctx.store, reader.principal, libraries), reader.groupUnknown);
    const search = typeof reader.query.search === 'string' ? reader.query.search.trim().toLowerCase() : '';
    const matching = search ? series.filter((s) => s.name.toLowerCase().includes(search)) : series;
    return sendJson(reply, reader, pageOf(matching.map((s) => seriesDto(s, reader.links)), pageRequest(reader.query)));
  }),

  route('/v1/series/{seriesId}', (reader, request, reply, ctx) => sendJson(reply, reader, seriesDto(seriesOf(reader, ctx, request), reader.links))),

  route('/v1/series/{seriesId}/books', (reader, request, reply, ctx) => {
    const series = seriesOf(reader, ctx, request);
    const context = seriesContext(series);
    return sendJson(reply, reader, pageOf(series.books.map((b) => bookDto(b, context, reader.links)), pageRequest(reader.query)));
  }),

  route('/v1/series/{seriesId}/thumbnail', (reader, request, reply, ctx) => sendCover(request, reply, ctx, seriesOf(reader, ctx, request).books[0]?.id)),

  route('/v1/books', (reader, _request, reply, ctx) => {
    const libraries = libraryFilter(reader.query);
    const series = groupSeries(visibleBooks(ctx.store, reader.principal, libraries), reader.groupUnknown);
    const search = typeof reader.query.search === 'string' ? reader.query.search.trim().toLowerCase() : '';
    const books = series.flatMap((s) => {
      const context = seriesContext(s);
      return s.books.filter((b) => !search || (b.title ?? '').toLowerCase().includes(search)).map((b) => ({ id: b.id, dto: bookDto(b, context, reader.links) }));
    });
    books.sort((a, b) => a.id - b.id);
    return sendJson(reply, reader, pageOf(books.map((b) => b.dto), pageRequest(reader.query, false)));
  }),

  route('/v1/books/{bookId}', (reader, request, reply, ctx) => {
    const row = visibleBook(reader, ctx, numericId(request, 'bookId'));
    return sendJson(reply, reader, bookDto(row, seriesContext(seriesOfBook(reader, ctx, row)), reader.links));
  }),

  route('/v1/books/{bookId}/thumbnail', (reader, request, reply, ctx) => sendCover(request, reply, ctx, visibleBook(reader, ctx, numericId(request, 'bookId')).id)),

  route('/v1/books/{bookId}/pages', async (reader, request, reply, ctx) => {
    const row = visibleBook(reader, ctx, numericId(request, 'bookId'));
    const pages = await pagesOf(ctx, row.id);
    return sendJson(
      reply,
      reader,
      pages.map((p) => ({ number: p.number, fileName: p.fileName, mediaType: p.mediaType, size: humanSize(p.sizeBytes ?? 0), ...(p.sizeBytes !== undefined ? { sizeBytes: p.sizeBytes } : {}) })),
    );
  }),

  route('/v1/books/{bookId}/pages/{pageNumber}', async (reader, request, reply, ctx) => {
    const row = visibleBook(reader, ctx, numericId(request, 'bookId'));
    const numberText = paramOf(request, 'pageNumber');
    const number = /^\d{1,6}$/.test(numberText) ? Number(numberText) : 0;
    const file = await readableFile(ctx, row.id);
    const png = reader.query.convert === 'png';
    let image;
    try {
      if (file && number >= 1) image = file.kind === 'comic' ? await comicPage(file.path, number) : await pdfPage(file.path, number, png ? 'png' : 'jpeg');
    } catch {
      image = undefined;
    }
    if (!image) throw new ApiError(404, `Page ${numberText} not found in book: ${row.id}`);
    let { data, mime } = image;
    if (png && mime !== 'image/png') {
      const { default: sharp } = await import('sharp');
      data = await sharp(data, { limitInputPixels: 268_402_689 }).rotate().png().toBuffer();
      mime = 'image/png';
    }
    return reply.type(mime).header('Cache-Control', 'private, max-age=86400').header('Content-Length', data.length).send(data);
  }),

  route('/v1/books/{bookId}/file', async (reader, request, reply, ctx) => {
    const row = visibleBook(reader, ctx, numericId(request, 'bookId'));
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

  route('/v1/collections', (reader, _request, reply, ctx) => {
    const series = groupSeries(visibleBooks(ctx.store, reader.principal), reader.groupUnknown);
    const seriesIdOfBook = new Map<number, string>();
    for (const s of series) for (const b of s.books) seriesIdOfBook.set(b.id, s.id);
    const epoch = new Date(0).toISOString();
    const collections = visibleShelves(ctx.store, reader.principal).map((shelf) => collectionDto(shelf, seriesIdOfBook, epoch));
    return sendJson(reply, reader, pageOf(collections, pageRequest(reader.query)));
  }),
];

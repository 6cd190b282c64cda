// The OPDS catalog for reader apps (Grimmory's OpdsController, and the OPDS 2 controller of newer Grimmory versions):
// `/api/v1/opds` always answers OPDS 1.2 Atom and `/api/v2/opds` always OPDS 2.0 JSON, whatever the Accept header
// says (KOReader 2026.07+ names OPDS 2 first but streams comic pages only from Atom); only the unversioned
// `/api/opds` negotiates. Readers sign in with HTTP Basic as an OPDS account (see opds-users.ts). See docs/opds.md.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { FastifyReply } from 'fastify';
import Type from 'typebox';
import type { Principal } from '../../core/auth/principal.ts';
import { bookAccess } from '../../core/auth/visibility.ts';
import { bookFiles } from '../../core/books/file-locations.ts';
import { decideRange } from '../../core/media/byte-range.ts';
import { ifRangeHolds, isNotModified } from '../../core/media/conditional-requests.ts';
import { attachmentDisposition } from '../../core/media/content-types.ts';
import { coverResource } from '../../core/media/cover-media.ts';
import { planFileDownload } from '../../core/media/download-plan.ts';
import { zipStream } from '../../core/media/zip-stream.ts';
import { ATOM_TYPE, renderAtom } from '../../core/opds/atom.ts';
import type { Feed } from '../../core/opds/feed.ts';
import {
  authorsFeed,
  catalogFeed,
  librariesFeed,
  magicShelvesFeed,
  OpdsError,
  param,
  recentFeed,
  recentGroup,
  rootFeed,
  seriesFeed,
  shelvesFeed,
  surpriseFeed,
  type FeedOptions,
  type Query,
  type Reader,
} from '../../core/opds/feeds.ts';
import { acquisitionType } from '../../core/opds/mime.ts';
import { AUTHENTICATION_TYPE, authenticationDocument, OPDS2_TYPE, problem, renderOpds2, searchFeed } from '../../core/opds/opds2.ts';
import { openSearchDescription } from '../../core/opds/opensearch.ts';
import { ownBuffer } from '../../core/store/catalog-bytes-cache.ts';
import type { OpdsSession } from '../../core/opds/users.ts';
import { filterRejection } from '../authenticate.ts';
import { signInWithOpdsAccount, switchedOn } from '../basic-auth.ts';
import type { DaemonContext } from '../context.ts';
import { ApiError, errorBody } from '../http-errors.ts';
import type { RouteRequest, RouteSpec } from '../route-spec.ts';
import { opdsUserRoutes } from './opds-users.ts';
import { loadSharp } from '../../core/covers/sharp-loader.ts';

const V1 = '/api/v1/opds';
const V2 = '/api/v2/opds';
const NEGOTIATED = '/api/opds';
const REALM = 'Booklore OPDS';
const CATALOG_NAME = 'Bindery';

/** `negotiated` is the unversioned address: Atom or JSON by the Accept header, links into the versioned families. */
type Family = 'v1' | 'v2' | 'negotiated';
type Format = 'atom' | 'json';

const FAMILY_PATH: Record<Family, string> = { v1: V1, v2: V2, negotiated: NEGOTIATED };
const rootOf = (ctx: DaemonContext, family: Family): string => `${ctx.config.basePath}${FAMILY_PATH[family]}`;

/** The `q` weight of each media range in an Accept header (`type/subtype` → weight). */
function acceptWeights(accept: string | undefined): Map<string, number> {
  const weights = new Map<string, number>();
  for (const part of (accept ?? '').split(',')) {
    const [range, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    if (!range) continue;
    const q = params.find((p) => p.startsWith('q='));
    const weight = q ? Number(q.slice(2)) : 1;
    weights.set(range, Number.isFinite(weight) ? weight : 0);
  }
  return weights;
}

/**
 * The versioned addresses mean what they say. The unversioned one speaks JSON when the client accepts
 * `application/opds+json` (or plain JSON) at least as much as Atom or XML, Atom otherwise.
 */
export function formatOf(accept: string | undefined, family: Family): Format {
  if (family !== 'negotiated') return family === 'v1' ? 'atom' : 'json';
  const weights = acceptWeights(accept);
  const json = Math.max(weights.get(OPDS2_TYPE) ?? 0, weights.get('application/json') ?? 0);
  const atom = Math.max(weights.get('application/atom+xml') ?? 0, weights.get('application/xml') ?? 0, weights.get('text/xml') ?? 0);
  return json > 0 && json >= atom ? 'json' : 'atom';
}

function absoluteRoot(request: RouteRequest, ctx: DaemonContext, family: Family): string {
  return `${request.protocol}://${request.host}${rootOf(ctx, family)}`;
}

function sendJson(reply: FastifyReply, status: number, type: string, body: unknown): FastifyReply {
  return reply.status(status).type(`${type};charset=utf-8`).send(JSON.stringify(body));
}

/** An error in the caller's format: RFC 9457 problem details for OPDS 2 clients, Grimmory's error body otherwise. */
function sendError(reply: FastifyReply, format: Format, status: number, message: string): FastifyReply {
  if (format === 'json') return sendJson(reply, status, 'application/problem+json', problem(status, message));
  return reply.status(status).send(errorBody(status, message));
}

/**
 * 401 with the Basic challenge. Atom clients get Spring's plain text, as from Grimmory; OPDS 2 clients the
 * Authentication for OPDS document that says how to sign in.
 */
function challenge(request: RouteRequest, reply: FastifyReply, ctx: DaemonContext, format: Format, reason: string): FastifyReply {
  reply.header('WWW-Authenticate', `Basic realm="${REALM}"`);
  if (format === 'json') {
    const auth = `${rootOf(ctx, 'v2')}/auth`;
    reply.header('Link', `<${auth}>; rel="http://opds-spec.org/auth/document"; type="${AUTHENTICATION_TYPE}"`);
    return sendJson(reply, 401, AUTHENTICATION_TYPE, authenticationDocument({ root: absoluteRoot(request, ctx, 'v2') }, `${CATALOG_NAME} OPDS`));
  }
  return reply.status(401).type('text/plain;charset=utf-8').send(`HTTP Status 401 - ${reason}`);
}

const SWITCH = 'OPDS_SERVER_ENABLED';
const opdsEnabled = (ctx: DaemonContext): Promise<boolean> => switchedOn(ctx, SWITCH);

function disabled(request: RouteRequest, reply: FastifyReply, format: Format): FastifyReply {
  const message = 'OPDS Server is disabled.';
  return format === 'json' ? sendJson(reply, 403, 'application/problem+json', problem(403, message)) : filterRejection(reply, request, 403);
}

interface Signed {
  session: OpdsSession;
  principal: Principal;
}

/**
 * The server switch, then HTTP Basic against the OPDS accounts, then the owning user (basic-auth.ts). Sends the refusal
 * in the caller's format and returns undefined when any of them says no.
 */
async function signIn(request: RouteRequest, reply: FastifyReply, ctx: DaemonContext, format: Format): Promise<Signed | undefined> {
  const outcome = await signInWithOpdsAccount(request, ctx, SWITCH);
  switch (outcome.kind) {
    case 'signed-in':
      return { session: outcome.session, principal: outcome.principal };
    case 'blocked':
      reply.header('Retry-After', '900');
      sendError(reply, format, 429, 'Too many failed sign-ins; try again later.');
      return undefined;
    case 'challenge':
      challenge(request, reply, ctx, format, outcome.reason);
      return undefined;
    case 'disabled':
      disabled(request, reply, format);
      return undefined;
  }
}

function feedOptions(format: Format): FeedOptions {
  return { now: new Date().toISOString(), name: CATALOG_NAME, groups: format === 'json' };
}

/**
 * A feed is encoded to UTF-8 once, here: the page cache keeps these very bytes and compression reads them, where a
 * string would be encoded again by each.
 */
function sendFeed(reply: FastifyReply, ctx: DaemonContext, family: Family, format: Format, feed: Feed): FastifyReply {
  reply.header('Cache-Control', 'no-cache, private');
  if (family === 'negotiated') reply.header('Vary', 'Accept');
  if (format === 'json') return reply.status(200).type(`${OPDS2_TYPE};charset=utf-8`).send(ownBuffer(renderOpds2(feed, { root: rootOf(ctx, 'v2') })));
  return reply.type(`${ATOM_TYPE[feed.kind]};charset=utf-8`).send(ownBuffer(renderAtom(feed, { root: rootOf(ctx, 'v1'), generator: CATALOG_NAME })));
}

const STATUS = { NOT_FOUND: 404, FORBIDDEN: 403 } as const;

/** Core and API errors in the caller's format. */
async function answering(reply: FastifyReply, format: Format, work: () => Promise<FastifyReply> | FastifyReply): Promise<FastifyReply> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof OpdsError) return sendError(reply, format, STATUS[error.code], error.message);
    if (error instanceof ApiError && format === 'json') return sendError(reply, format, error.status, error.message);
    if (format === 'json') {
      // Even a failure stays a problem document for an OPDS 2 client.
      reply.log.error({ err: error }, 'OPDS request failed');
      return sendError(reply, format, 500, 'An unexpected error occurred.');
    }
    throw error;
  }
}

type Build = (ctx: DaemonContext, reader: Reader, query: Query, options: FeedOptions) => Promise<Feed>;

function feedRoute(family: Family, path: string, build: Build, schema?: RouteSpec['schema']): RouteSpec {
  return {
    method: 'GET',
    url: `${FAMILY_PATH[family]}${path}`,
    auth: 'custom',
    ...(schema ? { schema } : {}),
    handler: async (request, reply, ctx) => {
      const format = formatOf(request.headers.accept, family);
      const signed = await signIn(request, reply, ctx, format);
      if (!signed) return reply;
      const reader: Reader = { principal: signed.principal, sortOrder: signed.session.sortOrder };
      return answering(reply, format, async () => sendFeed(reply, ctx, family, format, await build(ctx, reader, (request.query ?? {}) as Query, feedOptions(format))));
    },
  };
}

/** The book, if the reader may see it: 404 when it does not exist, 403 when it is not theirs to see. */
async function requireVisibleBook(ctx: DaemonContext, principal: Principal, bookId: number): Promise<void> {
  const access = await bookAccess(ctx.store.db, principal, bookId);
  if (access === 'missing') throw new ApiError(404, `Book not found with ID: ${bookId}`);
  if (access === 'hidden') throw new ApiError(403, 'You are not authorized to access this book.');
}

/**
 * Path numbers are read by the handlers, not by a schema: a schema refusal would come before sign-in and in the API's
 * error shape, where an OPDS 2 client must get a problem document.
 */
const BookParams = Type.Object({ bookId: Type.String() });

function pathNumber(value: unknown, name: string): number {
  if (typeof value === 'string' && /^\d{1,15}$/.test(value)) return Number(value);
  throw new ApiError(400, `Invalid ${name}: ${String(value)}`);
}
const DownloadQuery = Type.Object({ fileId: Type.Optional(Type.String()) }, { additionalProperties: true });

function etagOf(size: number, mtime: Date): string {
  return `"${size.toString(36)}-${Math.trunc(mtime.getTime()).toString(36)}"`;
}

function downloadRoute(family: Family): RouteSpec {
  return {
    method: 'GET',
    url: `${FAMILY_PATH[family]}/{bookId}/download`,
    auth: 'custom',
    schema: { params: BookParams, querystring: DownloadQuery },
    handler: async (request, reply, ctx) => {
      const format = formatOf(request.headers.accept, family);
      const signed = await signIn(request, reply, ctx, format);
      if (!signed) return reply;
      return answering(reply, format, async () => {
        const bookId = pathNumber((request.params as { bookId: string }).bookId, 'book id');
        await requireVisibleBook(ctx, signed.principal, bookId);
        const files = await bookFiles(ctx.store.db, bookId);
        const fileParam = param((request.query ?? {}) as Query, 'fileId');
        const wanted = fileParam !== undefined && /^\d+$/.test(fileParam) ? Number(fileParam) : undefined;
        const file = wanted !== undefined ? files?.files.find((f) => f.id === wanted) : files?.primary;
        if (!file) throw new ApiError(404, wanted !== undefined ? `File not found with ID: ${wanted}` : `File not found: ${bookId}`);
        const row = ((await ctx.store.exec.get('SELECT book_type, archive_type, file_name, is_folder_based FROM book_file WHERE id = ?', [file.id])) as Parameters<typeof acquisitionType>[0] | undefined) ?? {
          book_type: file.bookType,
          archive_type: null,
          file_name: file.fileName,
          is_folder_based: file.folderBased ? 1 : 0,
        };
        const type = acquisitionType(row);
        const plan = await planFileDownload(file);
        if (plan.kind === 'missing') throw new ApiError(404, `File not found: ${file.fileName}`);
        reply.header('Content-Disposition', attachmentDisposition(plan.fileName)).header('Cache-Control', 'no-cache, private');
        if (plan.kind === 'zip') return reply.type('application/zip').send(zipStream(plan.entries));

        const etag = etagOf(plan.size, plan.mtime);
        reply.header('Accept-Ranges', 'bytes').header('ETag', etag).header('Last-Modified', plan.mtime.toUTCString());
        const headers = request.headers;
        if (isNotModified(headers['if-none-match'], headers['if-modified-since'], etag, plan.mtime)) return reply.status(304).send();
        const rangeHeader = ifRangeHolds(headers['if-range'] as string | undefined, etag, plan.mtime) ? headers.range : undefined;
        const range = decideRange(rangeHeader, plan.size);
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
      });
    },
  };
}

const YEAR = 365 * 24 * 3600;

function coverRoute(family: Family): RouteSpec {
  return {
    method: 'GET',
    url: `${FAMILY_PATH[family]}/{bookId}/cover`,
    auth: 'custom',
    schema: { params: BookParams },
    handler: async (request, reply, ctx) => {
      const format = formatOf(request.headers.accept, family);
      const signed = await signIn(request, reply, ctx, format);
      if (!signed) return reply;
      return answering(reply, format, async () => {
        const bookId = pathNumber((request.params as { bookId: string }).bookId, 'book id');
        await requireVisibleBook(ctx, signed.principal, bookId);
        const query = (request.query ?? {}) as Query;
        // Grimmory's URL serves the thumbnail; `size=full` (the `image` link) the whole cover.
        const variant = param(query, 'size') === 'full' ? 'cover' : 'thumbnail';
        let image = await coverResource(ctx.store.db, ctx.paths.covers, bookId, 'book', variant);
        if (image.kind === 'placeholder') image = await coverResource(ctx.store.db, ctx.paths.covers, bookId, 'audiobook', variant);
        if (image.kind === 'placeholder') throw new ApiError(404, `Cover not found for book: ${bookId}`);
        const versioned = Object.keys(query).some((k) => k !== 'size');
        reply
          .type('image/jpeg')
          .header('ETag', image.etag)
          .header('Last-Modified', image.lastModified.toUTCString())
          .header('Content-Disposition', `inline; filename="${bookId}-${variant}.jpg"`)
          .header('Cache-Control', versioned ? `private, max-age=${YEAR}, immutable` : 'private, max-age=3600');
        if (isNotModified(request.headers['if-none-match'], request.headers['if-modified-since'], image.etag, image.lastModified)) return reply.status(304).send();
        return reply.header('Content-Length', image.size).send(createReadStream(image.path));
      });
    },
  };
}

const PageParams = Type.Object({ bookId: Type.String(), pageNumber: Type.String() });
const PageQuery = Type.Object({ fileId: Type.Optional(Type.String()), maxWidth: Type.Optional(Type.String()) }, { additionalProperties: true });
const PSE_IMAGE_TYPES = new Set(['image/jpeg']);

/** OPDS-PSE: one page of a comic, 0-based, as JPEG, at most `maxWidth` pixels wide when the reader asks. */
function pageRoute(family: Family): RouteSpec {
  return {
    method: 'GET',
    url: `${FAMILY_PATH[family]}/{bookId}/pages/{pageNumber}`,
    auth: 'custom',
    schema: { params: PageParams, querystring: PageQuery },
    handler: async (request, reply, ctx) => {
      const format = formatOf(request.headers.accept, family);
      const signed = await signIn(request, reply, ctx, format);
      if (!signed) return reply;
      return answering(reply, format, async () => {
        const params = request.params as { bookId: string; pageNumber: string };
        const bookId = pathNumber(params.bookId, 'book id');
        const pageNumber = pathNumber(params.pageNumber, 'page number');
        await requireVisibleBook(ctx, signed.principal, bookId);
        const query = (request.query ?? {}) as Query;
        const files = await bookFiles(ctx.store.db, bookId);
        const fileParam = param(query, 'fileId');
        const comics = (files?.files ?? []).filter((f) => f.bookType === 'CBX' && !f.folderBased);
        const file = fileParam !== undefined ? comics.find((f) => String(f.id) === fileParam) : (comics.find((f) => f.id === files?.primary?.id) ?? comics[0]);
        if (!file?.path) throw new ApiError(404, `No comic file for book: ${bookId}`);
        const path = file.path;
        const info = await stat(path).catch(() => undefined);
        if (!info?.isFile()) throw new ApiError(404, `File not found: ${file.fileName}`);

        const etag = `"p${pageNumber}-${etagOf(info.size, info.mtime).slice(1, -1)}-${param(query, 'maxWidth') ?? ''}"`;
        reply.header('ETag', etag).header('Cache-Control', 'private, max-age=86400');
        if (isNotModified(request.headers['if-none-match'], undefined, etag, undefined)) return reply.status(304).send();

        const [{ withComicArchive }, { orderPages, pageMime }] = await Promise.all([import('../../core/formats/comic-archive.ts'), import('../../core/formats/comic-pages.ts')]);
        const page = await withComicArchive(path, async (archive) => {
          const names = orderPages((await archive.list()).map((e) => e.name));
          const name = names[pageNumber];
          return name === undefined ? undefined : { name, data: await archive.read(name) };
        });
        if (!page) throw new ApiError(404, `Page ${pageNumber} not found in book: ${bookId}`);
        const widthParam = param(query, 'maxWidth');
        const maxWidth = widthParam !== undefined && /^\d{1,5}$/.test(widthParam) && Number(widthParam) > 0 ? Number(widthParam) : undefined;
        let data = page.data;
        if (maxWidth !== undefined || !PSE_IMAGE_TYPES.has(pageMime(page.name) ?? '')) {
          // The link announces JPEG (OPDS-PSE allows one type per link): other formats are converted.
          const sharp = await loadSharp();
          data = await sharp(page.data, { limitInputPixels: 268_402_689 })
            .rotate()
            .resize({ width: maxWidth, withoutEnlargement: true })
            .jpeg({ quality: 85 })
            .toBuffer();
        }
        return reply.type('image/jpeg').header('Content-Length', data.length).send(data);
      });
    },
  };
}

/** OpenSearch description: public, as in Grimmory (readers fetch it before they sign in). */
function searchDescriptionRoute(family: Family): RouteSpec {
  return {
    method: 'GET',
    url: `${FAMILY_PATH[family]}/search.opds`,
    auth: 'custom',
    handler: async (request, reply, ctx) => {
      const format = formatOf(request.headers.accept, family);
      if (!(await opdsEnabled(ctx))) return disabled(request, reply, format);
      if (format === 'json') return sendJson(reply, 200, OPDS2_TYPE, searchFeed({ root: rootOf(ctx, 'v2') }, new Date().toISOString()));
      return reply.type('application/opensearchdescription+xml;charset=utf-8').send(openSearchDescription(rootOf(ctx, 'v1'), CATALOG_NAME));
    },
  };
}

/** Anything else below the catalog: signed in first (as Grimmory's security chain does), then 404 in the caller's format. */
function unknownRoute(family: Family): RouteSpec {
  return {
    method: 'GET',
    url: `${FAMILY_PATH[family]}/{*rest}`,
    auth: 'custom',
    schema: { params: Type.Object({ '*': Type.String() }) },
    handler: async (request, reply, ctx) => {
      const format = formatOf(request.headers.accept, family);
      const signed = await signIn(request, reply, ctx, format);
      if (!signed) return reply;
      return sendError(reply, format, 404, 'Resource not found.');
    },
  };
}

function familyRoutes(family: Family): RouteSpec[] {
  const feeds: [string, Build][] = [
    ['', async (ctx, reader, _query, options) => rootFeed(options, options.groups ? await recentGroup(ctx.store, reader, options) : undefined)],
    ['/libraries', (ctx, reader, _query, options) => librariesFeed(ctx.store, reader, options)],
    ['/shelves', (ctx, reader, _query, options) => shelvesFeed(ctx.store, reader, options)],
    ['/magic-shelves', (ctx, reader, _query, options) => magicShelvesFeed(ctx.store, reader, options)],
    ['/authors', (ctx, reader, query, options) => authorsFeed(ctx.store, reader, query, options)],
    ['/series', (ctx, reader, query, options) => seriesFeed(ctx.store, reader, query, options)],
    ['/catalog', (ctx, reader, query, options) => catalogFeed(ctx.store, reader, query, options)],
    ['/recent', (ctx, reader, query, options) => recentFeed(ctx.store, reader, query, options)],
    ['/surprise', (ctx, reader, _query, options) => surpriseFeed(ctx.store, reader, options)],
  ];
  // The negotiated address serves feeds only: their links lead into the versioned families.
  const media = family === 'negotiated' ? [] : [downloadRoute(family), coverRoute(family), pageRoute(family)];
  return [...feeds.map(([path, build]) => feedRoute(family, path, build)), searchDescriptionRoute(family), ...media, unknownRoute(family)];
}

/** Both catalog families, the authentication document, and the account management the web interface calls. */
export const opdsRoutes: RouteSpec[] = [
  ...opdsUserRoutes,
  ...familyRoutes('v1'),
  ...familyRoutes('v2'),
  ...familyRoutes('negotiated'),
  {
    // Authentication for OPDS: the document itself needs no credentials (its spec says so).
    method: 'GET',
    url: `${V2}/auth`,
    auth: 'custom',
    handler: async (request, reply, ctx) => {
      if (!(await opdsEnabled(ctx))) return disabled(request, reply, 'json');
      return sendJson(reply, 200, AUTHENTICATION_TYPE, authenticationDocument({ root: absoluteRoot(request, ctx, 'v2') }, `${CATALOG_NAME} OPDS`));
    },
  },
];

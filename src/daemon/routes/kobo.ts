// Kobo's store API under /api/kobo/{token}: a Kobo e-reader whose api_endpoint points here syncs the user's Kobo
// shelf, reading state both ways, covers and downloads. What this server does not serve itself is forwarded to Kobo's
// store when `forwardToKoboStore` is on; if the store cannot be reached the device gets a local answer. See docs/kobo.md.
import { createReadStream } from 'node:fs';
import type { FastifyReply } from 'fastify';
import Type, { type TProperties } from 'typebox';
import { bookAccessOf } from '../../core/auth/visibility.ts';
import { syncsToKobo } from '../../core/kobo/compatibility.ts';
import { deviceFor, type KoboDevice } from '../../core/kobo/device-access.ts';
import {
  analyticsTests,
  DeviceRequestError,
  deviceAuthentication,
  localBookId,
  noDeals,
  ratingFromStars,
  stateUpdateResponse,
  userProfile,
} from '../../core/kobo/device-answers.ts';
import { bookMetadata, type KoboUrls } from '../../core/kobo/entitlements.ts';
import { koboDownload, settleDownloadSizes } from '../../core/kobo/download-file.ts';
import { loadKoboBooks } from '../../core/kobo/kobo-books.ts';
import { removeFromKoboShelf } from '../../core/kobo/kobo-shelf.ts';
import { cachedLocations } from '../../core/kobo/span-locations.ts';
import { finishSync, localSyncPage, nextToken } from '../../core/kobo/library-sync.ts';
import { readingStateFor, saveDeviceState, type DeviceContext } from '../../core/kobo/reading-state-store.ts';
import { parseDeviceState } from '../../core/kobo/reading-state.ts';
import { bundledResources, withOwnResources } from '../../core/kobo/resources.ts';
import { koboServerSettings, type KoboServerSettings } from '../../core/kobo/server-settings.ts';
import { forwardToStore, storeCoverUrl, type StoreResponse } from '../../core/kobo/store-proxy.ts';
import { decodeSyncToken, encodeSyncToken } from '../../core/kobo/sync-token.ts';
import { bookOfCover, isCoverToken, koboThumbnail } from '../../core/kobo/thumbnails.ts';
import { attachmentDisposition } from '../../core/media/content-types.ts';
import { setPersonalRating } from '../../core/reading/personal-rating.ts';
import { filterRejection } from '../authenticate.ts';
import { compressFast } from '../compression.ts';
import type { DaemonContext } from '../context.ts';
import { syncToHardcover } from '../hardcover-sync.ts';
import { ApiError, badRequest, bookNotFound, forbidden, notFound } from '../http-errors.ts';
import type { RouteRequest, RouteSpec } from '../route-spec.ts';

const BASE = '/api/kobo/{token}';
const BODY_LIMIT = 2 * 1024 * 1024;

interface KoboCall {
  request: RouteRequest;
  reply: FastifyReply;
  ctx: DaemonContext;
  device: KoboDevice;
  token: string;
}

type KoboHandler = (call: KoboCall) => unknown;

/** A route of the group: the token in the path names the device's user, who must hold the Kobo sync permission. */
function kobo(method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH', path: string, params: TProperties, handle: KoboHandler): RouteSpec {
  return {
    method,
    url: `${BASE}${path}`,
    auth: 'custom',
    bodyLimit: BODY_LIMIT,
    schema: { params: Type.Object({ token: Type.String(), ...params }) },
    handler: async (request, reply, ctx) => {
      const { token } = request.params as { token: string };
      const device = await deviceFor(ctx.store, token);
      if (typeof device === 'string') return filterRejection(reply, request, device === 'NO_PERMISSION' ? 403 : 401);
      return handle({ request, reply, ctx, device, token });
    },
  };
}

const header = (call: KoboCall, name: string): string | undefined => {
  const value = call.request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** scheme://host[:port] the device reached this server at, as a reverse proxy says when it is trusted. */
function serverRoot(call: KoboCall): string {
  const scheme = call.request.protocol;
  let host = call.request.host;
  const port = call.ctx.config.trustProxy ? header(call, 'x-forwarded-port')?.split(',')[0]?.trim() : undefined;
  const defaultPort = scheme === 'https' ? '443' : '80';
  if (port && /^\d+$/.test(port) && port !== defaultPort && !/:\d+$/.test(host)) host = `${host}:${port}`;
  return `${scheme}://${host}`;
}

function urlsOf(call: KoboCall): KoboUrls {
  return { koboBase: `${serverRoot(call)}${call.ctx.config.basePath}/api/kobo/${encodeURIComponent(call.token)}` };
}

function deviceContext(call: KoboCall): DeviceContext {
  const s = call.device.settings;
  return {
    userId: call.device.principal.userId,
    twoWay: s.two_way_progress_sync === 1,
    thresholds: { reading: s.progress_mark_as_reading_threshold ?? 1, finished: s.progress_mark_as_finished_threshold ?? 99 },
  };
}

/** The request's path and query below /api/kobo/<token>, as the device wrote them. */
function storePath(call: KoboCall): string {
  const marker = '/api/kobo/';
  const rest = call.request.url.slice(call.request.url.indexOf(marker) + marker.length);
  const slash = rest.search(/[/?]/);
  return slash === -1 ? '/' : rest.slice(slash).replace(/^\?/, '/?');
}

/** The store's answer, or undefined (logged, never with the token) when it cannot be had. */
async function askStore(call: KoboCall, options: { body?: unknown; storeSyncToken?: string | null } = {}): Promise<StoreResponse | undefined> {
  let response: StoreResponse;
  try {
    response = await forwardToStore(call.ctx.http, call.ctx.config.koboStoreUrl, {
      method: call.request.method,
      path: storePath(call),
      headers: call.request.headers,
      body: options.body,
      storeSyncToken: options.storeSyncToken ?? null,
    });
  } catch (error) {
    call.request.log.warn({ code: (error as { code?: string }).code, reason: (error as Error).message }, 'Kobo store did not answer; answering locally');
    return undefined;
  }
  // A store in trouble (5xx) or answering something other than JSON is no answer for a device.
  if (response.status >= 500 || (!response.json && response.body !== undefined)) {
    call.request.log.warn({ status: response.status }, 'Kobo store did not answer; answering locally');
    return undefined;
  }
  return response;
}

function relay(reply: FastifyReply, response: StoreResponse): FastifyReply {
  reply.status(response.status);
  for (const [name, value] of Object.entries(response.headers)) reply.header(name, value);
  if (response.body === undefined) return reply.send();
  return reply.type('application/json').send(JSON.stringify(response.body));
}

/** Forwards when forwarding is on and the store answers; otherwise `local()`. */
async function storeOr(call: KoboCall, server: KoboServerSettings, local: () => unknown, body?: unknown): Promise<unknown> {
  if (server.forwardToKoboStore) {
    const response = await askStore(call, { body });
    if (response) return relay(call.reply, response);
  }
  return local();
}

const json = (reply: FastifyReply, body: unknown): FastifyReply => reply.type('application/json; charset=utf-8').send(JSON.stringify(body));
const empty = (reply: FastifyReply): FastifyReply => reply.status(200).send();
const genericNotFound = (): ApiError => notFound('Not Found');

/** 404 for a missing book, 403 for one the user may not see. */
async function requireVisible(call: KoboCall, bookId: number): Promise<void> {
  const access = await bookAccessOf(call.ctx.store, call.device.principal, bookId);
  if (access === 'missing') throw bookNotFound(bookId);
  if (access === 'hidden') throw forbidden('You are not authorized to access this book.');
}

const isVisible = async (call: KoboCall, bookId: number): Promise<boolean> => (await bookAccessOf(call.ctx.store, call.device.principal, bookId)) === 'ok';

async function initialization(call: KoboCall): Promise<unknown> {
  const server = await koboServerSettings(call.ctx.store.db);
  let base: Record<string, unknown> | undefined;
  if (server.forwardToKoboStore) {
    const response = await askStore(call);
    const resources = response?.json ? (response.body as { Resources?: unknown } | null)?.Resources : undefined;
    if (resources && typeof resources === 'object' && !Array.isArray(resources)) base = resources as Record<string, unknown>;
  }
  const root = serverRoot(call);
  return json(call.reply.header('x-kobo-apitoken', 'e30='), { Resources: withOwnResources(base ?? bundledResources(), root, urlsOf(call).koboBase) });
}

/** The Kobo store's part of the last page: its entitlements, whether it has more, its new token. */
async function storeSyncPart(call: KoboCall, rawToken: string | null): Promise<{ items: unknown[]; more: boolean; raw: string | null } | undefined> {
  const response = await askStore(call, { storeSyncToken: rawToken });
  if (!response || response.status >= 300) return undefined;
  const items = Array.isArray(response.body) ? response.body.filter((item) => typeof item === 'object' && item !== null && ('NewEntitlement' in item || 'ChangedEntitlement' in item)) : [];
  const more = (response.headers['x-kobo-sync'] ?? '').toLowerCase() === 'continue';
  return { items, more, raw: response.headers['x-kobo-synctoken'] ?? rawToken };
}

async function librarySync(call: KoboCall): Promise<unknown> {
  const { ctx, device } = call;
  const server = await koboServerSettings(ctx.store.db);
  const token = decodeSyncToken(header(call, 'x-kobo-synctoken'));
  const page = await localSyncPage({ store: ctx.store, principal: device.principal, settings: device.settings, server, urls: urlsOf(call), token, locations: cachedLocations(ctx.paths.cache) });
  await settleDownloadSizes(ctx.store.db, ctx.paths.cache, server, page.downloads);
  const items: unknown[] = page.items;
  let more = page.more;
  let raw = token.rawKoboSyncToken;
  if (!more && server.forwardToKoboStore) {
    const store = await storeSyncPart(call, raw);
    if (store) {
      items.push(...store.items);
      more = store.more;
      raw = store.raw;
    }
  }
  if (!more) await finishSync(ctx.store, device.principal.userId, page);
  call.reply.header('x-kobo-synctoken', encodeSyncToken(nextToken(token, page, more, raw))).header('X-Kobo-sync', more ? 'continue' : '');
  // A device pulls these pages one after the other, each built for it alone: compressed fast (see compressFast).
  return call.reply.type('application/json; charset=utf-8').send(compressFast(Buffer.from(JSON.stringify(items))));
}

async function thumbnail(call: KoboCall): Promise<unknown> {
  const { imageId, width, height, isGreyscale } = call.request.params as { imageId: string; width: number; height: number; isGreyscale: boolean };
  if (imageId.startsWith('BL-')) {
    const bookId = isCoverToken(imageId) ? await bookOfCover(call.ctx.store.db, imageId) : undefined;
    if (bookId === undefined || !(await isVisible(call, bookId))) throw genericNotFound();
    const image = await koboThumbnail(call.ctx.paths.covers, call.ctx.paths.cache, bookId, { coverHash: imageId, width, height, greyscale: isGreyscale });
    if (!image) throw genericNotFound();
    // The token changes with every new cover: what is sent for it never changes.
    return call.reply.type('image/jpeg').header('Cache-Control', 'private, max-age=31536000, immutable').header('Content-Length', image.length).send(image);
  }
  const server = await koboServerSettings(call.ctx.store.db);
  if (server.forwardToKoboStore) return call.reply.status(307).header('Location', storeCoverUrl(imageId, width, height, isGreyscale)).send();
  throw genericNotFound();
}

async function authDevice(call: KoboCall): Promise<unknown> {
  const server = await koboServerSettings(call.ctx.store.db);
  return storeOr(
    call,
    server,
    () => {
      try {
        return json(call.reply, deviceAuthentication(call.request.body));
      } catch (error) {
        if (error instanceof DeviceRequestError) throw badRequest(error.message);
        throw error;
      }
    },
    call.request.body ?? {},
  );
}

/** A handler for `{bookId}` routes: this server's books by number, the store's otherwise (or 404). */
function perBook(local: (call: KoboCall, bookId: number) => unknown, options: { unknownLocally?: (call: KoboCall) => unknown } = {}): KoboHandler {
  return async (call) => {
    const { bookId } = call.request.params as { bookId: string };
    const id = localBookId(bookId);
    if (id !== undefined) return local(call, id);
    const server = await koboServerSettings(call.ctx.store.db);
    return storeOr(call, server, () => {
      if (options.unknownLocally) return options.unknownLocally(call);
      throw genericNotFound();
    }, call.request.body);
  };
}

async function metadata(call: KoboCall, bookId: number): Promise<unknown> {
  await requireVisible(call, bookId);
  const [book] = await loadKoboBooks(call.ctx.store, [bookId]);
  if (!book || !syncsToKobo(book.primary)) throw genericNotFound();
  const server = await koboServerSettings(call.ctx.store.db);
  const metadata = bookMetadata(book, server, urlsOf(call));
  await settleDownloadSizes(call.ctx.store.db, call.ctx.paths.cache, server, [{ metadata, primary: book.primary }]);
  return json(call.reply, [metadata]);
}

async function getState(call: KoboCall, bookId: number): Promise<unknown> {
  if (!(await isVisible(call, bookId))) return json(call.reply, []);
  const [book] = await loadKoboBooks(call.ctx.store, [bookId]);
  const state = await readingStateFor(call.ctx.store.db, deviceContext(call), { id: bookId, primary: book?.primary }, cachedLocations(call.ctx.paths.cache));
  return json(call.reply, state ? [state] : []);
}

async function putState(call: KoboCall, bookId: number): Promise<unknown> {
  // As the metadata and download routes: a book the user may not see is refused, not acknowledged.
  await requireVisible(call, bookId);
  const body = call.request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('Request body is missing or malformed.');
  const list = (body as { ReadingStates?: unknown }).ReadingStates;
  if (list !== undefined && list !== null && !Array.isArray(list)) throw badRequest('ReadingStates must be an array');
  const states = ((list ?? []) as unknown[]).flatMap((raw) => {
    const state = parseDeviceState(raw);
    if (!state) return [];
    const entitlementId = (state.EntitlementId ?? '').replace(/^"|"$/g, '');
    return [{ state, entitlementId, id: localBookId(entitlementId) }];
  });
  // A state naming another of this server's books is held to the same rule, before anything is written.
  for (const { id } of states) {
    if (id !== undefined && (await bookAccessOf(call.ctx.store, call.device.principal, id)) === 'hidden') throw forbidden('You are not authorized to access this book.');
  }
  const ctx = deviceContext(call);
  const answered: string[] = [];
  for (const { state, entitlementId, id } of states) {
    answered.push(entitlementId);
    // States for books that are gone (or the store's) are acknowledged and dropped.
    if (id === undefined || !(await isVisible(call, id))) continue;
    const [book] = await loadKoboBooks(call.ctx.store, [id]);
    const percent = await saveDeviceState(call.ctx.store.readingState.db, ctx, { id, primary: book?.primary }, state);
    syncToHardcover(call.ctx, ctx.userId, id, percent);
  }
  return json(call.reply, stateUpdateResponse(answered));
}

async function download(call: KoboCall, bookId: number): Promise<unknown> {
  await requireVisible(call, bookId);
  const server = await koboServerSettings(call.ctx.store.db);
  const file = await koboDownload(call.ctx.store.db, call.ctx.paths.cache, bookId, server);
  if (file.kind === 'not-epub') throw badRequest('The requested book is not an EPUB or CBX file.');
  if (file.kind === 'missing') throw new ApiError(500, `Error while downloading file, bookId: ${bookId}`);
  if (file.conversionFailure) call.request.log.warn({ bookId, reason: file.conversionFailure }, 'KEPUB conversion failed; sending the EPUB');
  return call.reply
    .type('application/octet-stream')
    .header('Content-Length', file.size)
    .header('Content-Disposition', attachmentDisposition(file.fileName))
    .send(createReadStream(file.path));
}

async function removeFromDevice(call: KoboCall, bookId: number): Promise<unknown> {
  await removeFromKoboShelf(call.ctx.store.db, call.device.principal.userId, bookId);
  return empty(call.reply);
}

async function rate(call: KoboCall, bookId: number): Promise<unknown> {
  const { rating } = call.request.params as { rating: number };
  // A book the user cannot see does not exist for them.
  if (!(await isVisible(call, bookId))) throw bookNotFound(bookId);
  await setPersonalRating(call.ctx.store.readingState.db, call.device.principal.userId, [bookId], ratingFromStars(rating));
  return empty(call.reply);
}

async function catchAll(call: KoboCall): Promise<unknown> {
  const server = await koboServerSettings(call.ctx.store.db);
  return storeOr(call, server, () => empty(call.reply), call.request.body);
}

const BookParam = { bookId: Type.String() };
const ThumbnailParams = { imageId: Type.String(), width: Type.Integer(), height: Type.Integer(), isGreyscale: Type.Boolean() };

function thumbnailRoute(path: string, extra: TProperties): RouteSpec {
  return kobo('GET', path, { ...ThumbnailParams, ...extra }, thumbnail);
}

export const koboRoutes: RouteSpec[] = [
  kobo('GET', '/v1/initialization', {}, initialization),
  kobo('GET', '/v1/library/sync', {}, librarySync),
  thumbnailRoute('/v1/books/{imageId}/{version}/thumbnail/{width}/{height}/{quality}/{isGreyscale}/image.jpg', { version: Type.String(), quality: Type.String() }),
  thumbnailRoute('/v1/books/{imageId}/{version}/thumbnail/{width}/{height}/{isGreyscale}/image.jpg', { version: Type.String() }),
  thumbnailRoute('/v1/books/{imageId}/thumbnail/{width}/{height}/{quality}/{isGreyscale}/image.jpg', { quality: Type.String() }),
  thumbnailRoute('/v1/books/{imageId}/thumbnail/{width}/{height}/{isGreyscale}/image.jpg', {}),
  kobo('POST', '/v1/auth/device', {}, authDevice),
  kobo('GET', '/v1/library/{bookId}/metadata', BookParam, perBook(metadata)),
  kobo('GET', '/v1/library/{bookId}/state', BookParam, perBook(getState)),
  kobo('PUT', '/v1/library/{bookId}/state', BookParam, perBook(putState)),
  kobo('POST', '/v1/analytics/gettests', {}, (call) => json(call.reply, analyticsTests())),
  // Analytics are never passed on.
  kobo('POST', '/v1/analytics/event', {}, (call) => empty(call.reply)),
  kobo('GET', '/v1/books/{bookId}/download', BookParam, async (call) => {
    const { bookId } = call.request.params as { bookId: string };
    const id = localBookId(bookId);
    if (id === undefined) throw genericNotFound();
    return download(call, id);
  }),
  kobo('DELETE', '/v1/library/{bookId}', BookParam, perBook(removeFromDevice)),
  kobo('POST', '/v1/products/{bookId}/nextread', BookParam, perBook((call) => empty(call.reply), { unknownLocally: (call) => empty(call.reply) })),
  kobo('GET', '/v1/user/profile', {}, async (call) => storeOr(call, await koboServerSettings(call.ctx.store.db), () => json(call.reply, userProfile()))),
  kobo('GET', '/v1/deals', {}, async (call) => storeOr(call, await koboServerSettings(call.ctx.store.db), () => json(call.reply, noDeals()))),
  kobo('POST', '/v1/products/{bookId}/rating/{rating}', { ...BookParam, rating: Type.Integer() }, perBook(rate)),
  ...(['GET', 'POST', 'PUT', 'DELETE', 'PATCH'] as const).map((method) => kobo(method, '/{*rest}', { '*': Type.String() }, catchAll)),
];

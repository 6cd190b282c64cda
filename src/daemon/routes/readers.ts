// The web UI's readers: EPUB structure and entries, comic pages and their sizes, PDF outline, the audiobook player's
// info, streams and cover.
import type { FastifyReply } from 'fastify';
import Type from 'typebox';
import type { LocatedFile } from '../../core/books/file-locations.ts';
import { FormatError } from '../../core/formats/errors.ts';
import { coverFile } from '../../core/covers/cover-store.ts';
import { audiobookInfo, audiobookTracks, parseChapters } from '../../core/readers/audiobook-reader.ts';
import { comicPageDimensions, comicPageInfo } from '../../core/readers/comic-reader.ts';
import { epubBookInfo, epubEntry } from '../../core/readers/epub-reader.ts';
import { pdfBookInfo } from '../../core/readers/pdf-reader.ts';
import { comicPage, comicPages } from '../../core/komga/pages.ts';
import { contentTypeOf } from '../../core/media/content-types.ts';
import { accessibleBookFiles, fileOfType } from '../book-file-access.ts';
import { ApiError, badRequest } from '../http-errors.ts';
import { sendRangedFile } from '../ranged-file.ts';
import type { RouteRequest, RouteSpec } from '../route-spec.ts';
import type { DaemonContext } from '../context.ts';

const BookParams = Type.Object({ bookId: Type.Integer() });
const BookTypeQuery = Type.Object({ bookType: Type.Optional(Type.String()), token: Type.Optional(Type.String()) });

type ReaderKind = 'EPUB' | 'CBX' | 'PDF' | 'AUDIOBOOK';

/** The file a reader opens: the one of `bookType`, else the primary; it must be of the reader's kind and on disk. */
async function readerFile(request: RouteRequest, ctx: DaemonContext, kind: ReaderKind): Promise<LocatedFile & { path: string }> {
  const { bookId } = request.params as { bookId: number };
  const { bookType } = request.query as { bookType?: string };
  const files = await accessibleBookFiles(request, ctx, bookId);
  const file = bookType ? fileOfType(files, bookType) : (files.primary?.bookType === kind ? files.primary : files.files.find((f) => f.bookType === kind && f.isBook));
  if (!file || file.bookType !== kind) throw badRequest(`Book ${bookId} has no ${kind} file to read`);
  if (!file.path) throw new ApiError(404, `File not found: ${file.fileName}`);
  return file as LocatedFile & { path: string };
}

/** A book file that cannot be parsed is Grimmory's FILE_READ_ERROR: a 500 with the reason, never a stack trace. */
async function reading<T>(file: LocatedFile, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof FormatError) {
      if (error.code === 'IO' && /ENOENT/.test(error.message)) throw new ApiError(404, `File not found: ${file.fileName}`);
      throw new ApiError(500, `Failed to read ${file.fileName}: ${error.message}`);
    }
    throw error;
  }
}

const PAGE_CACHE = 'private, max-age=3600';

/** A reader route that answers JSON read from the book's file of `kind`. */
function readerJson(url: string, auth: 'jwt' | 'jwt-or-query', kind: ReaderKind, read: (file: LocatedFile & { path: string }, ctx: DaemonContext) => Promise<unknown>): RouteSpec {
  return {
    method: 'GET',
    url,
    auth,
    schema: { params: BookParams, querystring: BookTypeQuery },
    handler: async (request, _reply, ctx) => {
      const file = await readerFile(request, ctx, kind);
      return reading(file, () => read(file, ctx));
    },
  };
}

function sendImage(reply: FastifyReply, data: Buffer, type: string): FastifyReply {
  return reply.header('Cache-Control', PAGE_CACHE).type(type).header('Content-Length', data.length).send(data);
}

export const readerRoutes: RouteSpec[] = [
  readerJson('/api/v1/epub/{bookId}/info', 'jwt', 'EPUB', (file) => epubBookInfo(file.path)),
  {
    method: 'GET',
    url: '/api/v1/epub/{bookId}/file/{*filePath}',
    auth: 'jwt-or-query',
    schema: { params: Type.Object({ bookId: Type.Integer(), '*': Type.String() }), querystring: BookTypeQuery },
    handler: async (request, reply, ctx) => {
      const file = await readerFile(request, ctx, 'EPUB');
      const requested = (request.params as { '*': string })['*'];
      const entry = await reading(file, () => epubEntry(file.path, requested));
      if (!entry) throw new ApiError(404, `File not found in EPUB: ${requested}`);
      return reply.header('Cache-Control', PAGE_CACHE).type(entry.mediaType).header('Content-Length', entry.data.length).send(entry.data);
    },
  },
  readerJson('/api/v1/cbx/{bookId}/pages', 'jwt-or-query', 'CBX', async (file) => (await comicPages(file.path)).map((page) => page.number)),
  readerJson('/api/v1/cbx/{bookId}/page-info', 'jwt-or-query', 'CBX', (file) => comicPageInfo(file.path)),
  readerJson('/api/v1/cbx/{bookId}/page-dimensions', 'jwt-or-query', 'CBX', (file) => comicPageDimensions(file.path)),
  {
    method: 'GET',
    url: '/api/v1/media/book/{bookId}/cbx/pages/{pageNumber}',
    auth: 'jwt-or-query',
    schema: { params: Type.Object({ bookId: Type.Integer(), pageNumber: Type.Integer() }), querystring: BookTypeQuery },
    handler: async (request, reply, ctx) => {
      const file = await readerFile(request, ctx, 'CBX');
      const { pageNumber } = request.params as { pageNumber: number };
      const page = pageNumber >= 1 ? await reading(file, () => comicPage(file.path, pageNumber)) : undefined;
      if (!page) throw new ApiError(404, `Page ${pageNumber} not found in ${file.fileName}`);
      return sendImage(reply, page.data, page.mime);
    },
  },
  readerJson('/api/v1/pdf/{bookId}/pages', 'jwt', 'PDF', async (file) => Array.from({ length: (await pdfBookInfo(file.path)).pageCount }, (_, i) => i + 1)),
  readerJson('/api/v1/pdf/{bookId}/info', 'jwt', 'PDF', (file) => pdfBookInfo(file.path)),
  readerJson('/api/v1/audiobooks/{bookId}/info', 'jwt', 'AUDIOBOOK', (file, ctx) => audiobookInfo(ctx.store.db, file)),
  {
    method: 'GET',
    url: '/api/v1/audiobooks/{bookId}/stream',
    auth: 'jwt-or-query',
    schema: { params: BookParams, querystring: Type.Object({ bookType: Type.Optional(Type.String()), token: Type.Optional(Type.String()), trackIndex: Type.Optional(Type.Integer({ minimum: 0 })) }) },
    handler: async (request, reply, ctx) => {
      const file = await readerFile(request, ctx, 'AUDIOBOOK');
      const { trackIndex } = request.query as { trackIndex?: number };
      if (!file.folderBased) return sendRangedFile(request, reply, file.path, contentTypeOf(file.fileName), file.fileName);
      return streamTrack(request, reply, ctx, file, trackIndex ?? 0);
    },
  },
  {
    method: 'GET',
    url: '/api/v1/audiobooks/{bookId}/track/{trackIndex}/stream',
    auth: 'jwt-or-query',
    schema: { params: Type.Object({ bookId: Type.Integer(), trackIndex: Type.Integer({ minimum: 0 }) }), querystring: BookTypeQuery },
    handler: async (request, reply, ctx) => {
      const file = await readerFile(request, ctx, 'AUDIOBOOK');
      const { trackIndex } = request.params as { trackIndex: number };
      if (!file.folderBased) {
        if (trackIndex !== 0) throw new ApiError(404, `Track ${trackIndex} not found: ${file.fileName} is a single-file audiobook`);
        return sendRangedFile(request, reply, file.path, contentTypeOf(file.fileName), file.fileName);
      }
      return streamTrack(request, reply, ctx, file, trackIndex);
    },
  },
  {
    method: 'GET',
    url: '/api/v1/audiobooks/{bookId}/cover',
    auth: 'jwt-or-query',
    schema: { params: BookParams, querystring: BookTypeQuery },
    handler: async (request, reply, ctx) => {
      const file = await readerFile(request, ctx, 'AUDIOBOOK');
      return sendRangedFile(request, reply, coverFile(ctx.paths.covers, file.bookId, 'audiobook', 'cover'), 'image/jpeg', `audiobook cover of book ${file.bookId}`);
    },
  },
];

async function streamTrack(request: RouteRequest, reply: FastifyReply, ctx: DaemonContext, file: LocatedFile & { path: string }, trackIndex: number): Promise<FastifyReply> {
  const row = await ctx.store.db.selectFrom('book_file').select('chapters_json').where('id', '=', file.id).executeTakeFirst();
  const chapters = parseChapters(row?.chapters_json ?? null);
  const tracks = await reading(file, () => audiobookTracks(file.path, chapters));
  const track = tracks[trackIndex];
  if (!track) throw new ApiError(404, `Track ${trackIndex} not found: the audiobook has ${tracks.length} tracks`);
  return sendRangedFile(request, reply, track.path, contentTypeOf(track.fileName), track.fileName);
}

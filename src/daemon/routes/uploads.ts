// FileUploadController: a book uploaded into a library folder (named by the upload pattern, catalogued at once) or
// into the bookdrop (held for review). The file is streamed to disk, never buffered, and cut off at
// `max_file_upload_size_in_mb`.
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { MultipartFile, MultipartValue } from '@fastify/multipart';
import Type from 'typebox';
import { canSeeLibrary } from '../../core/auth/visibility.ts';
import { libraryUploadDir, maxUploadMb, placeBookdropUpload, placeLibraryUpload, receiveUpload, tooLarge, UploadError, type ReceivedFile, type UploadErrorCode } from '../../core/bookdrop/upload.ts';
import { ensureBookdropDir } from '../../core/bookdrop/intake.ts';
import { audit } from '../audit.ts';
import { principalOf } from '../authenticate.ts';
import { daemonBookdropFetcher } from '../bookdrop-fetcher.ts';
import { daemonBookdropEnv } from '../bookdrop-watcher.ts';
import type { DaemonContext } from '../context.ts';
import { ApiError, badRequest, forbidden } from '../http-errors.ts';
import { adminOr, type RouteRequest, type RouteSpec } from '../route-spec.ts';

const STATUS: Record<UploadErrorCode, number> = {
  EMPTY: 400,
  TOO_LARGE: 400,
  BAD_NAME: 400,
  UNSUPPORTED: 400,
  EXISTS: 409,
  LIBRARY_NOT_FOUND: 404,
  INVALID_PATH: 400,
  FORMAT_NOT_ALLOWED: 400,
  UNREADABLE: 400,
};

function asApiError(error: unknown): unknown {
  if (error instanceof UploadError) return new ApiError(STATUS[error.code], error.message);
  return error;
}

/** What a multipart request held: the `file` part (already on disk) and the text fields. */
export interface Received {
  file?: ReceivedFile & { fileName: string };
  fields: Record<string, string>;
}

type MultipartRequest = RouteRequest & { isMultipart(): boolean; parts(options?: object): AsyncIterableIterator<MultipartFile | MultipartValue> };

/**
 * Reads the parts in order: the `file` part is streamed into the folder `dirFor` names at that point (fields sent
 * before it may decide it), other file parts are skipped. A part over the limit ends it all with FILE_TOO_LARGE.
 */
export async function readUpload(request: RouteRequest, maxBytes: number, limitMb: number, dirFor: (fields: Record<string, string>) => Promise<string>): Promise<Received> {
  const req = request as MultipartRequest;
  if (!req.isMultipart()) throw badRequest('Uploaded file is missing.');
  const declared = Number(request.headers['content-length']);
  // Plainly too large: refuse before reading a byte (multipart framing adds far less than a megabyte).
  if (Number.isFinite(declared) && declared > maxBytes + 1024 * 1024) throw asApiError(tooLarge(limitMb));
  const out: Received = { fields: {} };
  try {
    for await (const part of req.parts({ limits: { fileSize: maxBytes } })) {
      if (part.type === 'field') {
        if (typeof part.value === 'string') out.fields[part.fieldname] = part.value;
        continue;
      }
      if (part.fieldname !== 'file' || out.file) {
        part.file.resume();
        continue;
      }
      const dir = await dirFor(out.fields);
      const received = await receiveUpload(part.file as Readable & { truncated?: boolean }, dir, maxBytes, limitMb);
      out.file = { ...received, fileName: part.filename };
    }
  } catch (error) {
    if (out.file) await import('node:fs/promises').then((fs) => fs.rm((out.file as ReceivedFile).path, { force: true }));
    if ((error as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') throw asApiError(tooLarge(limitMb));
    if ((error as { code?: string }).code?.startsWith('FST_')) throw badRequest((error as Error).message);
    throw asApiError(error);
  }
  if (!out.file) throw badRequest('Uploaded file is missing.');
  return out;
}

function idParam(name: string, ...candidates: (string | undefined)[]): number | undefined {
  const raw = candidates.find((c) => c !== undefined && c.trim() !== '');
  if (raw === undefined) return undefined;
  if (!/^\d{1,15}$/.test(raw.trim())) throw new ApiError(400, 'Validation error', [`${name}: '${raw}' is not a number`]);
  return Number(raw.trim());
}

async function limits(ctx: DaemonContext): Promise<{ maxBytes: number; limitMb: number }> {
  const limitMb = await maxUploadMb(ctx.store);
  return { limitMb, maxBytes: limitMb * 1024 * 1024 };
}

export const uploadRoutes: RouteSpec[] = [
  {
    method: 'POST',
    url: '/api/v1/files/upload',
    auth: 'jwt',
    rule: adminOr('canUpload'),
    multipart: true,
    schema: { querystring: Type.Object({ libraryId: Type.Optional(Type.String()), pathId: Type.Optional(Type.String()) }) },
    handler: async (request, reply, ctx) => {
      const query = request.query as { libraryId?: string; pathId?: string };
      const principal = principalOf(request);
      const { maxBytes, limitMb } = await limits(ctx);
      const fallback = join(ctx.config.dataDir, 'tmp');
      const ids = (fields: Record<string, string>): { libraryId: number | undefined; pathId: number | undefined } => ({
        libraryId: idParam('libraryId', query.libraryId, fields.libraryId),
        pathId: idParam('pathId', query.pathId, fields.pathId),
      });
      // Straight into the library folder when the form names it before the file: no copy across filesystems later.
      const upload = await readUpload(request, maxBytes, limitMb, async (fields) => {
        const { libraryId, pathId } = ids(fields);
        return libraryUploadDir(ctx.store, libraryId, pathId, fallback);
      });
      const file = upload.file as ReceivedFile & { fileName: string };
      try {
        const { libraryId, pathId } = ids(upload.fields);
        if (libraryId === undefined || pathId === undefined) {
          throw new ApiError(400, 'Validation error', [...(libraryId === undefined ? ['libraryId: must not be null'] : []), ...(pathId === undefined ? ['pathId: must not be null'] : [])]);
        }
        const library = await ctx.store.db.selectFrom('library').select('id').where('id', '=', libraryId).executeTakeFirst();
        if (library && !canSeeLibrary(principal, libraryId)) throw forbidden('You are not authorized to access this library.');
        const placed = await placeLibraryUpload({ store: ctx.store, dataDir: ctx.config.dataDir }, file, { libraryId, pathId, fileName: file.fileName });
        ctx.log.info({ bookId: placed.bookId, path: placed.path, user: principal.username }, 'upload: new book in library');
        await audit(ctx, request, 'BOOK_UPLOADED', `Uploaded file: ${file.fileName}`, { type: 'Library', id: libraryId });
      } catch (error) {
        await import('node:fs/promises').then((fs) => fs.rm(file.path, { force: true }));
        throw asApiError(error);
      }
      return reply.status(204).send();
    },
  },
  {
    method: 'POST',
    url: '/api/v1/files/upload/bookdrop',
    auth: 'jwt',
    rule: adminOr('canUpload'),
    multipart: true,
    handler: async (request, reply, ctx) => {
      const { maxBytes, limitMb } = await limits(ctx);
      const env = daemonBookdropEnv(ctx, daemonBookdropFetcher(ctx));
      await ensureBookdropDir(env.bookdropDir);
      const upload = await readUpload(request, maxBytes, limitMb, async () => env.bookdropDir);
      const file = upload.file as ReceivedFile & { fileName: string };
      try {
        const placed = await placeBookdropUpload(env, file, file.fileName);
        ctx.log.info({ path: placed.path, id: placed.id, user: principalOf(request).username }, 'upload: new file in the bookdrop');
      } catch (error) {
        throw asApiError(error);
      }
      // Grimmory declares a Book here but sends none.
      return reply.status(200).send();
    },
  },
];

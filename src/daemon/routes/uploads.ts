// FileUploadController: a book uploaded into a library folder (named by the upload pattern, catalogued at once) or
// into the bookdrop (held for review). The file is streamed to disk, never buffered, and cut off at
// `max_file_upload_size_in_mb`.
import { join } from 'node:path';
import Type from 'typebox';
import { canSeeLibrary } from '../../core/auth/visibility.ts';
import { libraryUploadDir, maxUploadMb, placeBookdropUpload, placeLibraryUpload, UploadError, type ReceivedFile, type UploadErrorCode } from '../../core/bookdrop/upload.ts';
import { ensureBookdropDir } from '../../core/bookdrop/intake.ts';
import type { Liveness } from '../../core/store/liveness.ts';
import { audit } from '../audit.ts';
import { principalOf } from '../authenticate.ts';
import { daemonBookdropFetcher } from '../bookdrop-fetcher.ts';
import { daemonBookdropEnv } from '../bookdrop-watcher.ts';
import { ApiError, forbidden } from '../http-errors.ts';
import { readFileUpload, uploadLimitMb } from '../multipart-upload.ts';
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
  file: ReceivedFile & { fileName: string };
  fields: Record<string, string>;
}

/** The upload form with the file streamed into the folder `dirFor` names; refusals of the upload code as HTTP errors. */
export async function readUpload(request: RouteRequest, limitMb: number, dirFor: (fields: Record<string, string>) => Promise<string>, liveness: Liveness): Promise<Received> {
  try {
    const form = await readFileUpload(request, uploadLimitMb(limitMb), dirFor, liveness);
    return { file: { ...form.file, fileName: form.fileName }, fields: form.fields };
  } catch (error) {
    throw asApiError(error);
  }
}

function idParam(name: string, ...candidates: (string | undefined)[]): number | undefined {
  const raw = candidates.find((c) => c !== undefined && c.trim() !== '');
  if (raw === undefined) return undefined;
  if (!/^\d{1,15}$/.test(raw.trim())) throw new ApiError(400, 'Validation error', [`${name}: '${raw}' is not a number`]);
  return Number(raw.trim());
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
      const limitMb = await maxUploadMb(ctx.store);
      const fallback = join(ctx.config.dataDir, 'tmp');
      const ids = (fields: Record<string, string>): { libraryId: number | undefined; pathId: number | undefined } => ({
        libraryId: idParam('libraryId', query.libraryId, fields.libraryId),
        pathId: idParam('pathId', query.pathId, fields.pathId),
      });
      // Straight into the library folder when the form names it before the file: no copy across filesystems later.
      const upload = await readUpload(request, limitMb, async (fields) => {
        const { libraryId, pathId } = ids(fields);
        return libraryUploadDir(ctx.store, libraryId, pathId, fallback);
      }, ctx.store.liveness);
      const file = upload.file;
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
      const limitMb = await maxUploadMb(ctx.store);
      const env = daemonBookdropEnv(ctx, daemonBookdropFetcher(ctx));
      await ensureBookdropDir(env.bookdropDir);
      const upload = await readUpload(request, limitMb, async () => env.bookdropDir, ctx.store.liveness);
      const file = upload.file;
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

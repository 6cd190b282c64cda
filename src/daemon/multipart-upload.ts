// Multipart uploads: the one `file` part of a form read under a size cap, either streamed to a hidden file on disk or
// (for small images) held in memory, with the text fields sent alongside. Every upload route reads its form here.
import { rm } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { MultipartFile, MultipartValue } from '@fastify/multipart';
import { receiveUpload, UploadError, type ReceivedFile } from '../core/bookdrop/upload.ts';
import { readSetting } from '../core/settings/app-settings.ts';
import { MAX_COVER_BYTES } from '../core/covers/cover-upload.ts';
import type { Liveness } from '../core/store/liveness.ts';
import { workMark } from '../core/work-files.ts';
import type { DaemonContext } from './context.ts';
import { badRequest } from './http-errors.ts';
import type { RouteRequest } from './route-spec.ts';

/** A route's cap on the file part and the error it answers when the cap is passed. */
export interface UploadLimit {
  bytes: number;
  tooLarge: () => Error;
}

export interface UploadForm<T> {
  file: T;
  fileName: string;
  fields: Record<string, string>;
}

type MultipartRequest = RouteRequest & { isMultipart(): boolean; parts(options?: object): AsyncIterableIterator<MultipartFile | MultipartValue> };

/** The upload size limit as a `File size exceeds the limit: N MB` answer, the wording of the upload routes. */
export function uploadLimitMb(mb: number): UploadLimit {
  return { bytes: mb * 1024 * 1024, tooLarge: () => badRequest(`File size exceeds the limit: ${mb} MB`) };
}

/** The limit for an uploaded image (cover, photo): the upload limit setting, but never above what an image could need. */
export async function imageUploadLimit(ctx: DaemonContext): Promise<UploadLimit & { mb: number }> {
  const setting = await readSetting(ctx.store.db, 'MAX_FILE_UPLOAD_SIZE_IN_MB');
  const mb = Math.max(1, Math.min(typeof setting === 'number' && setting > 0 ? setting : 100, MAX_COVER_BYTES / (1024 * 1024)));
  return { ...uploadLimitMb(mb), mb };
}

/**
 * Reads the parts in order: the first `file` part goes to `take` (text fields sent before it are already in
 * `fields`), other file parts are skipped. Passing the cap ends it all with the limit's error; what `take` kept is
 * handed to `discard` when the request fails after it.
 */
async function readForm<T>(request: RouteRequest, limit: UploadLimit, take: (part: MultipartFile, fields: Record<string, string>) => Promise<T>, discard: (file: T) => Promise<void>): Promise<UploadForm<T>> {
  const req = request as MultipartRequest;
  if (!req.isMultipart()) throw badRequest('Uploaded file is missing.');
  const declared = Number(request.headers['content-length']);
  // Plainly too large: refuse before reading a byte (multipart framing adds far less than a megabyte).
  if (Number.isFinite(declared) && declared > limit.bytes + 1024 * 1024) throw limit.tooLarge();
  const fields: Record<string, string> = {};
  let received: { file: T; fileName: string } | undefined;
  try {
    for await (const part of req.parts({ limits: { fileSize: limit.bytes } })) {
      if (part.type === 'field') {
        if (typeof part.value === 'string') fields[part.fieldname] = part.value;
      } else if (part.fieldname === 'file' && !received) {
        received = { file: await take(part, fields), fileName: part.filename };
      } else {
        part.file.resume();
      }
    }
  } catch (error) {
    if (received) await discard(received.file);
    const code = (error as { code?: string }).code;
    if (code === 'FST_REQ_FILE_TOO_LARGE') throw limit.tooLarge();
    if (code?.startsWith('FST_')) throw badRequest((error as Error).message);
    throw error;
  }
  if (!received) throw badRequest('Uploaded file is missing.');
  return { ...received, fields };
}

/**
 * The `file` part streamed to a hidden partial file in the folder `dirFor` names when the part arrives (fields sent
 * before it may decide it), flushed to disk, under a partial name with this process's mark (`liveness`: see
 * core/work-files.ts). The caller places or removes the file.
 */
export function readFileUpload(request: RouteRequest, limit: UploadLimit, dirFor: (fields: Record<string, string>) => Promise<string>, liveness: Liveness): Promise<UploadForm<ReceivedFile>> {
  return readForm(
    request,
    limit,
    async (part, fields) => {
      const dir = await dirFor(fields);
      try {
        return await receiveUpload(part.file as Readable & { truncated?: boolean }, dir, limit.bytes, limit.bytes / (1024 * 1024), await workMark(liveness));
      } catch (error) {
        if (error instanceof UploadError && error.code === 'TOO_LARGE') throw limit.tooLarge();
        throw error;
      }
    },
    (file) => rm(file.path, { force: true }),
  );
}

/** The `file` part in memory, for uploads small enough to hold (images). */
export function readBufferUpload(request: RouteRequest, limit: UploadLimit): Promise<UploadForm<Buffer>> {
  return readForm(
    request,
    limit,
    (part) => part.toBuffer(),
    async () => undefined,
  );
}

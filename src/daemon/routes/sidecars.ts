// Sidecar metadata files (`<book>.metadata.json` beside the book): read, sync status, export and import, per book
// and per library (Grimmory's SidecarController).
import Type from 'typebox';
import { bookSidecarStatus, exportBookSidecar, importBookSidecar, readBookSidecar } from '../../core/sidecar/book-sidecar.ts';
import { SidecarError } from '../../core/sidecar/errors.ts';
import { exportLibrarySidecars, importLibrarySidecars, type LibrarySidecarRun } from '../../core/sidecar/library-sidecars.ts';
import { requireBookAccess, requireLibraryAccess } from '../access.ts';
import { principalOf } from '../authenticate.ts';
import { ApiError } from '../http-errors.ts';
import { adminOr, type RouteSpec } from '../route-spec.ts';

const BookParams = Type.Object({ bookId: Type.Integer() });
const LibraryParams = Type.Object({ libraryId: Type.Integer() });

/** SidecarError → Grimmory's error body and status. */
function toApiError(error: unknown): unknown {
  if (!(error instanceof SidecarError)) return error;
  switch (error.code) {
    case 'BOOK_NOT_FOUND':
    case 'LIBRARY_NOT_FOUND':
    case 'NO_BOOK_FILE':
    case 'SIDECAR_NOT_FOUND':
      return new ApiError(404, error.message);
    case 'SIDECAR_INVALID':
    case 'SIDECARS_DISABLED':
      return new ApiError(400, error.message);
    case 'IO':
      return new ApiError(500, error.message);
  }
}

async function mapped<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw toApiError(error);
  }
}

/** Grimmory's `{message, exported|imported}`, plus what else happened (skipped and failed books). */
function runBody(message: string, countKey: 'exported' | 'imported', run: LibrarySidecarRun): Record<string, unknown> {
  return {
    message,
    [countKey]: run.done,
    ...(countKey === 'imported' ? { changed: run.changed } : {}),
    skipped: run.skipped,
    failed: run.failed,
    failures: run.failures,
  };
}

type Direction = 'export' | 'import';

const TRANSFER = {
  export: { book: exportBookSidecar, library: exportLibrarySidecars, done: 'exported' },
  import: { book: importBookSidecar, library: importLibrarySidecars, done: 'imported' },
} as const;

/** One book's sidecar written from its metadata (export) or read into it (import). */
function bookTransfer(direction: Direction): RouteSpec['handler'] {
  return async (request, _reply, ctx) => {
    const { bookId } = request.params as { bookId: number };
    await requireBookAccess(ctx, principalOf(request), bookId);
    await mapped(() => TRANSFER[direction].book(ctx.store, ctx.paths.covers, bookId));
    return { message: `Sidecar metadata ${TRANSFER[direction].done} successfully` };
  };
}

/** The same for every book of a library the caller may see; a book's failure is counted, not fatal. */
function libraryTransfer(direction: Direction): RouteSpec['handler'] {
  return async (request, _reply, ctx) => {
    const { libraryId } = request.params as { libraryId: number };
    const principal = principalOf(request);
    await requireLibraryAccess(ctx, principal, libraryId);
    const { library, done } = TRANSFER[direction];
    const run = await mapped(() => library(ctx.store, ctx.paths.covers, libraryId, { principal }));
    if (run.failed > 0) ctx.log.warn({ libraryId, failed: run.failed, failures: run.failures.slice(0, 10) }, `some sidecars were not ${done}`);
    return runBody(`Bulk ${direction} completed`, done, run);
  };
}

export const sidecarRoutes: RouteSpec[] = [
  {
    method: 'GET',
    url: '/api/v1/books/{bookId}/sidecar',
    auth: 'jwt',
    schema: { params: BookParams },
    handler: async (request, reply, ctx) => {
      const { bookId } = request.params as { bookId: number };
      await requireBookAccess(ctx, principalOf(request), bookId);
      const sidecar = await mapped(() => readBookSidecar(ctx.store.db, bookId));
      // Grimmory answers a book without a sidecar file with a bare 404.
      if (!sidecar) return reply.status(404).send();
      return sidecar;
    },
  },
  {
    method: 'GET',
    url: '/api/v1/books/{bookId}/sidecar/status',
    auth: 'jwt',
    schema: { params: BookParams },
    handler: async (request, _reply, ctx) => {
      const { bookId } = request.params as { bookId: number };
      await requireBookAccess(ctx, principalOf(request), bookId);
      return { status: await mapped(() => bookSidecarStatus(ctx.store.db, bookId)) };
    },
  },
  {
    method: 'POST',
    url: '/api/v1/books/{bookId}/sidecar/export',
    auth: 'jwt',
    rule: adminOr('canEditMetadata'),
    schema: { params: BookParams },
    handler: bookTransfer('export'),
  },
  {
    method: 'POST',
    url: '/api/v1/books/{bookId}/sidecar/import',
    auth: 'jwt',
    rule: adminOr('canEditMetadata'),
    schema: { params: BookParams },
    handler: bookTransfer('import'),
  },
  {
    method: 'POST',
    url: '/api/v1/libraries/{libraryId}/sidecar/export-all',
    auth: 'jwt',
    rule: adminOr('canEditMetadata'),
    schema: { params: LibraryParams },
    handler: libraryTransfer('export'),
  },
  {
    method: 'POST',
    url: '/api/v1/libraries/{libraryId}/sidecar/import-all',
    auth: 'jwt',
    rule: adminOr('canEditMetadata'),
    schema: { params: LibraryParams },
    handler: libraryTransfer('import'),
  },
];

// LibraryController: libraries, their folders, background scans, health and the books of one library.
import { resolve } from 'node:path';
import { Readable } from 'node:stream';
import Type from 'typebox';
import { canSeeLibrary } from '../../core/auth/visibility.ts';
import { bookArrayChunks, booksJson, visibleBookIds } from '../../core/books/book-list.ts';
import { BOOK_FILE_TYPES, type BookFileType } from '../../core/formats/types.ts';
import { countBookFiles } from '../../core/libraries/library-file-count.ts';
import { libraryHealth } from '../../core/libraries/library-health.ts';
import { libraryJson } from '../../core/libraries/library-json.ts';
import {
  createLibrary,
  findLibrary,
  formatCounts,
  LibraryError,
  listLibraries,
  ORGANIZATION_MODES,
  removeLibrary,
  setFileNamingPattern,
  updateLibrary,
  type OrganizationMode,
} from '../../core/libraries/libraries.ts';
import { requireBookAccess, requireLibraryAccess } from '../access.ts';
import { audit } from '../audit.ts';
import { principalOf } from '../authenticate.ts';
import { scanJobs } from '../scan-jobs.ts';
import { ApiError, badRequest, bookNotFound } from '../http-errors.ts';
import { adminOr, type RouteSpec } from '../route-spec.ts';
import { nullable } from '../schema-types.ts';

const literals = <T extends readonly string[]>(values: T) => Type.Union(values.map((v) => Type.Literal(v)));

export const METADATA_SOURCES = ['EMBEDDED', 'SIDECAR', 'PREFER_SIDECAR', 'PREFER_EMBEDDED', 'NONE'] as const;
const BookFileTypes = Type.Array(literals(BOOK_FILE_TYPES));

const CreateLibraryRequest = Type.Object({
  name: Type.String({ minLength: 1, pattern: '\\S' }),
  icon: nullable(Type.String()),
  iconType: nullable(literals(['LUCIDE', 'CUSTOM_SVG'] as const)),
  paths: Type.Array(Type.Object({ id: nullable(Type.Integer()), path: Type.String({ minLength: 1 }) }), { minItems: 1 }),
  watch: nullable(Type.Boolean()),
  formatPriority: nullable(BookFileTypes),
  allowedFormats: nullable(BookFileTypes),
  metadataSource: nullable(literals(METADATA_SOURCES)),
  organizationMode: nullable(literals(ORGANIZATION_MODES)),
});

interface LibraryRequestBody {
  name: string;
  icon?: string | null;
  iconType?: string | null;
  paths: { path: string }[];
  watch?: boolean | null;
  formatPriority?: BookFileType[] | null;
  allowedFormats?: BookFileType[] | null;
  metadataSource?: string | null;
  organizationMode?: OrganizationMode | null;
}

const LibraryParams = Type.Object({ libraryId: Type.Integer() });


function libraryError(error: unknown, libraryId?: number): never {
  if (error instanceof LibraryError) {
    if (error.code === 'NOT_FOUND') throw new ApiError(404, `Library not found with ID: ${libraryId ?? ''}`.trim());
    if (error.code === 'INVALID' && error.message.startsWith('not a folder: ')) throw badRequest(`Invalid library path: ${error.message.slice('not a folder: '.length)}`);
    throw badRequest(error.message);
  }
  throw error;
}

export const libraryRoutes: RouteSpec[] = [
  {
    method: 'GET',
    url: '/api/v1/libraries',
    auth: 'jwt',
    handler: async (request, _reply, ctx) => {
      const principal = principalOf(request);
      return (await listLibraries(ctx.store.db)).filter((l) => canSeeLibrary(principal, l.id)).map(libraryJson);
    },
  },
  {
    method: 'GET',
    url: '/api/v1/libraries/health',
    auth: 'jwt',
    handler: async (_request, _reply, ctx) => libraryHealth(ctx.store.db),
  },
  {
    method: 'GET',
    url: '/api/v1/libraries/{libraryId}',
    auth: 'jwt',
    schema: { params: LibraryParams },
    handler: async (request, _reply, ctx) => {
      const { libraryId } = request.params as { libraryId: number };
      await requireLibraryAccess(ctx, principalOf(request), libraryId);
      return libraryJson(await findLibrary(ctx.store.db, libraryId).catch((e: unknown) => libraryError(e, libraryId)));
    },
  },
  {
    method: 'POST',
    url: '/api/v1/libraries',
    auth: 'jwt',
    rule: adminOr('canManageLibrary'),
    schema: { body: CreateLibraryRequest },
    handler: async (request, _reply, ctx) => {
      const body = request.body as LibraryRequestBody;
      const library = await createLibrary(ctx.store.db, {
        name: body.name,
        paths: body.paths.map((p) => p.path),
        watch: body.watch ?? false,
        ...(body.organizationMode ? { organizationMode: body.organizationMode } : {}),
        ...(body.formatPriority ? { formatPriority: body.formatPriority } : {}),
        ...(body.allowedFormats ? { allowedFormats: body.allowedFormats } : {}),
        ...(body.icon ? { icon: body.icon } : {}),
        ...(body.iconType ? { iconType: body.iconType } : {}),
        ...(body.metadataSource ? { metadataSource: body.metadataSource } : {}),
        assignTo: principalOf(request).userId,
      }).catch((e: unknown) => libraryError(e));
      scanJobs(ctx).request(library.id);
      await audit(ctx, request, 'LIBRARY_CREATED', `Created library: ${library.name}`, { type: 'Library', id: library.id });
      return libraryJson(library);
    },
  },
  {
    method: 'PUT',
    url: '/api/v1/libraries/{libraryId}',
    auth: 'jwt',
    rule: adminOr('canManageLibrary'),
    schema: { params: LibraryParams, body: CreateLibraryRequest },
    handler: async (request, _reply, ctx) => {
      const { libraryId } = request.params as { libraryId: number };
      await requireLibraryAccess(ctx, principalOf(request), libraryId);
      const body = request.body as LibraryRequestBody;
      const jobs = scanJobs(ctx);
      const current = await findLibrary(ctx.store.db, libraryId).catch((e: unknown) => libraryError(e, libraryId));
      const before = current.paths.map((p) => p.path).sort().join('\0');
      const changes = {
        name: body.name,
        paths: body.paths.map((p) => p.path),
        icon: body.icon ?? null,
        iconType: body.iconType ?? null,
        watch: body.watch ?? false,
        formatPriority: body.formatPriority ?? null,
        allowedFormats: body.allowedFormats ?? null,
        ...(body.metadataSource ? { metadataSource: body.metadataSource } : {}),
        ...(body.organizationMode ? { organizationMode: body.organizationMode } : {}),
      };
      // A scan must not run over folders while they are taken out; it is restarted over the new set below.
      const wasScanning = jobs.isScanning(libraryId);
      const foldersChange = before !== [...new Set(changes.paths.map((p) => resolve(p)))].sort().join('\0');
      if (foldersChange) await jobs.cancel(libraryId);
      let result;
      try {
        result = await updateLibrary(ctx.store.db, libraryId, changes, ctx.paths.covers);
      } catch (error) {
        if (foldersChange && wasScanning) jobs.request(libraryId);
        libraryError(error, libraryId);
      }
      if (result.addedPaths.length > 0 || (foldersChange && wasScanning)) jobs.request(libraryId);
      await audit(ctx, request, 'LIBRARY_UPDATED', `Updated library: ${result.library.name}`, { type: 'Library', id: libraryId });
      return libraryJson(result.library);
    },
  },
  {
    method: 'DELETE',
    url: '/api/v1/libraries/{libraryId}',
    auth: 'jwt',
    rule: adminOr('canManageLibrary'),
    schema: { params: LibraryParams },
    handler: async (request, reply, ctx) => {
      const { libraryId } = request.params as { libraryId: number };
      await requireLibraryAccess(ctx, principalOf(request), libraryId);
      await scanJobs(ctx).cancel(libraryId);
      const removed = await removeLibrary(ctx.store.db, libraryId, ctx.paths.covers).catch((e: unknown) => libraryError(e, libraryId));
      await audit(ctx, request, 'LIBRARY_DELETED', `Deleted library: ${removed.library.name}`, { type: 'Library', id: libraryId });
      return reply.status(204).send();
    },
  },
  {
    method: 'GET',
    url: '/api/v1/libraries/{libraryId}/book/{bookId}',
    auth: 'jwt',
    schema: { params: Type.Object({ libraryId: Type.Integer(), bookId: Type.Integer() }) },
    handler: async (request, _reply, ctx) => {
      const { libraryId, bookId } = request.params as { libraryId: number; bookId: number };
      const principal = principalOf(request);
      await requireLibraryAccess(ctx, principal, libraryId);
      const inLibrary = await ctx.store.db.selectFrom('book').select('id').where('id', '=', bookId).where('library_id', '=', libraryId).executeTakeFirst();
      if (!inLibrary) throw bookNotFound(bookId);
      await requireBookAccess(ctx, principal, bookId);
      const [book] = await booksJson(ctx.store, [bookId], {
        listView: false,
        withDescription: true,
        principal,
        user: { reading: false, unsetWithoutProgress: false, emptyShelves: 'empty' },
      });
      if (!book) throw bookNotFound(bookId);
      return book;
    },
  },
  {
    method: 'GET',
    url: '/api/v1/libraries/{libraryId}/book',
    auth: 'jwt',
    schema: { params: LibraryParams },
    handler: async (request, reply, ctx) => {
      const { libraryId } = request.params as { libraryId: number };
      const principal = principalOf(request);
      await requireLibraryAccess(ctx, principal, libraryId);
      const ids = await visibleBookIds(ctx.store, principal, { libraryId });
      const chunks = bookArrayChunks(ctx.store, ids, {
        listView: false,
        withDescription: true,
        principal,
        user: { reading: false, unsetWithoutProgress: false, emptyShelves: 'empty' },
      });
      return reply.type('application/json').send(Readable.from(chunks, { objectMode: false }));
    },
  },
  {
    method: 'PUT',
    url: '/api/v1/libraries/{libraryId}/refresh',
    auth: 'jwt',
    rule: adminOr('canManageLibrary'),
    schema: { params: LibraryParams },
    handler: async (request, reply, ctx) => {
      const { libraryId } = request.params as { libraryId: number };
      await requireLibraryAccess(ctx, principalOf(request), libraryId);
      scanJobs(ctx).request(libraryId);
      const scanned = await findLibrary(ctx.store.db, libraryId).catch(() => undefined);
      await audit(ctx, request, 'LIBRARY_SCANNED', `Scanned library: ${scanned?.name ?? libraryId}`, { type: 'Library', id: libraryId });
      return reply.status(204).send();
    },
  },
  {
    method: 'PATCH',
    url: '/api/v1/libraries/{libraryId}/file-naming-pattern',
    auth: 'jwt',
    rule: adminOr('canManageLibrary'),
    schema: { params: LibraryParams, body: Type.Object({ fileNamingPattern: nullable(Type.String()) }) },
    handler: async (request, _reply, ctx) => {
      const { libraryId } = request.params as { libraryId: number };
      await requireLibraryAccess(ctx, principalOf(request), libraryId);
      const { fileNamingPattern } = request.body as { fileNamingPattern?: string | null };
      const library = await setFileNamingPattern(ctx.store.db, libraryId, fileNamingPattern ?? null).catch((e: unknown) => libraryError(e, libraryId));
      await audit(ctx, request, 'NAMING_PATTERN_CHANGED', `Changed naming pattern for library: ${library.name} to: ${fileNamingPattern ?? ''}`, { type: 'Library', id: libraryId });
      return libraryJson(library);
    },
  },
  {
    method: 'POST',
    url: '/api/v1/libraries/scan',
    auth: 'jwt',
    rule: adminOr('canManageLibrary'),
    schema: { body: CreateLibraryRequest },
    handler: async (request) => {
      const body = request.body as LibraryRequestBody;
      return countBookFiles(body.paths.map((p) => p.path), body.allowedFormats);
    },
  },
  {
    method: 'GET',
    url: '/api/v1/libraries/{libraryId}/format-counts',
    auth: 'jwt',
    schema: { params: LibraryParams },
    handler: async (request, _reply, ctx) => {
      const { libraryId } = request.params as { libraryId: number };
      await requireLibraryAccess(ctx, principalOf(request), libraryId);
      return formatCounts(ctx.store.db, libraryId).catch((e: unknown) => libraryError(e, libraryId));
    },
  },
];

// Reads the web UI makes on every page: authors, magic shelves, metadata tasks, the bookdrop badge and the version.
import Type from 'typebox';
import { authorDetails, authorDetailsByName, authorNamesOfBook, listAuthors } from '../../core/authors/authors.ts';
import { bookdropSummary } from '../../core/bookdrop/bookdrop-summary.ts';
import { activeFetchTasks } from '../../core/metadata/fetch-tasks.ts';
import { listMagicShelves } from '../../core/shelves/magic-shelves.ts';
import { VERSION } from '../../version.ts';
import { requireBookAccess } from '../access.ts';
import { principalOf } from '../authenticate.ts';
import { ApiError } from '../http-errors.ts';
import { adminOr, type RouteSpec } from '../route-spec.ts';

/** Release versions are tagged `vX.Y.Z`; Grimmory reports its own version the same way. */
export function currentVersion(version: string = VERSION): string {
  return /^\d+\.\d+\.\d+$/.test(version) ? `v${version}` : version;
}

const authorNotFound = (what: number | string): ApiError => new ApiError(404, `Author not found with ID: ${what}`);

export const uiReadRoutes: RouteSpec[] = [
  {
    method: 'GET',
    url: '/api/v1/authors',
    auth: 'jwt',
    handler: async (request, _reply, ctx) => listAuthors(ctx.store.db, principalOf(request)),
  },
  {
    method: 'GET',
    url: '/api/v1/authors/by-name',
    auth: 'jwt',
    schema: { querystring: Type.Object({ name: Type.String() }) },
    handler: async (request, _reply, ctx) => {
      const { name } = request.query as { name: string };
      const author = await authorDetailsByName(ctx.store.db, principalOf(request), name);
      if (!author) throw authorNotFound(name);
      return author;
    },
  },
  {
    method: 'GET',
    url: '/api/v1/authors/book/{bookId}',
    auth: 'jwt',
    schema: { params: Type.Object({ bookId: Type.Integer() }) },
    handler: async (request, _reply, ctx) => {
      const { bookId } = request.params as { bookId: number };
      await requireBookAccess(ctx, principalOf(request), bookId);
      return authorNamesOfBook(ctx.store.db, bookId);
    },
  },
  {
    method: 'GET',
    url: '/api/v1/authors/{authorId}',
    auth: 'jwt',
    schema: { params: Type.Object({ authorId: Type.Integer() }) },
    handler: async (request, _reply, ctx) => {
      const { authorId } = request.params as { authorId: number };
      const author = await authorDetails(ctx.store.db, principalOf(request), authorId);
      if (!author) throw authorNotFound(authorId);
      return author;
    },
  },
  {
    method: 'GET',
    url: '/api/magic-shelves',
    auth: 'jwt',
    handler: async (request, _reply, ctx) => listMagicShelves(ctx.store.db, principalOf(request).userId),
  },
  {
    method: 'GET',
    url: '/api/metadata/tasks/active',
    auth: 'jwt',
    rule: adminOr('canEditMetadata'),
    handler: async (_request, _reply, ctx) => activeFetchTasks(ctx.store.db),
  },
  {
    method: 'GET',
    url: '/api/v1/bookdrop/notification',
    auth: 'jwt',
    rule: adminOr('canAccessBookdrop'),
    handler: async (_request, _reply, ctx) => bookdropSummary(ctx.store.db),
  },
  {
    // Bindery does not call out to check for releases; "unknown" keeps the UI from announcing an update.
    method: 'GET',
    url: '/api/v1/version',
    auth: 'jwt',
    handler: () => ({ current: currentVersion(), latest: 'unknown' }),
  },
  {
    method: 'GET',
    url: '/api/v1/version/changelog',
    auth: 'jwt',
    handler: () => [],
  },
];

// Reads the web UI makes on every page: magic shelves, metadata tasks, the bookdrop badge and the version (the
// author reads are in ./authors.ts).
import { bookdropSummary } from '../../core/bookdrop/bookdrop-summary.ts';
import { activeFetchTasks } from '../../core/metadata/fetch-tasks.ts';
import { listMagicShelves } from '../../core/shelves/magic-shelves.ts';
import { VERSION } from '../../version.ts';
import { principalOf } from '../authenticate.ts';
import { adminOr, type RouteSpec } from '../route-spec.ts';

/** Release versions are tagged `vX.Y.Z`; Grimmory reports its own version the same way. */
export function currentVersion(version: string = VERSION): string {
  return /^\d+\.\d+\.\d+$/.test(version) ? `v${version}` : version;
}

export const uiReadRoutes: RouteSpec[] = [
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

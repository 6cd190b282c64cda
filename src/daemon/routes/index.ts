// The route table: every group's routes, each group's module loaded when it is first needed (the daemon registers
// routes from routes/manifest.ts and loads a group with its first request; tests and the API docs load them all).
import type { RouteSpec } from '../route-spec.ts';

export const ROUTE_GROUPS = {
  'system': async (): Promise<RouteSpec[]> => (await import('./system.ts')).systemRoutes,
  'users': async (): Promise<RouteSpec[]> => (await import('./users.ts')).accountRoutes,
  'duplicates': async (): Promise<RouteSpec[]> => (await import('./duplicates.ts')).duplicateRoutes,
  'reading': async (): Promise<RouteSpec[]> => (await import('./reading.ts')).readingRoutes,
  'shelves': async (): Promise<RouteSpec[]> => (await import('./shelves.ts')).shelfRoutes,
  'settings': async (): Promise<RouteSpec[]> => (await import('./settings.ts')).settingsRoutes,
  'ui-reads': async (): Promise<RouteSpec[]> => (await import('./ui-reads.ts')).uiReadRoutes,
  'authors': async (): Promise<RouteSpec[]> => (await import('./authors.ts')).authorRoutes,
  'libraries': async (): Promise<RouteSpec[]> => (await import('./libraries.ts')).libraryRoutes,
  'paths': async (): Promise<RouteSpec[]> => (await import('./paths.ts')).pathRoutes,
  'books': async (): Promise<RouteSpec[]> => (await import('./books.ts')).bookRoutes,
  'book-files': async (): Promise<RouteSpec[]> => (await import('./book-files.ts')).bookFileRoutes,
  'media': async (): Promise<RouteSpec[]> => (await import('./media.ts')).mediaRoutes,
  'file-moves': async (): Promise<RouteSpec[]> => (await import('./file-moves.ts')).fileMoveRoutes,
  'koreader-users': async (): Promise<RouteSpec[]> => (await import('./koreader-users.ts')).koreaderUserRoutes,
  'kosync': async (): Promise<RouteSpec[]> => (await import('./kosync.ts')).kosyncRoutes,
  'opds': async (): Promise<RouteSpec[]> => (await import('./opds.ts')).opdsRoutes,
  'komga': async (): Promise<RouteSpec[]> => (await import('./komga.ts')).komgaRoutes,
  'bookdrop': async (): Promise<RouteSpec[]> => (await import('./bookdrop.ts')).bookdropRoutes,
  'uploads': async (): Promise<RouteSpec[]> => (await import('./uploads.ts')).uploadRoutes,
  'sidecars': async (): Promise<RouteSpec[]> => (await import('./sidecars.ts')).sidecarRoutes,
  'content-restrictions': async (): Promise<RouteSpec[]> => (await import('./content-restrictions.ts')).contentRestrictionRoutes,
  'readers': async (): Promise<RouteSpec[]> => (await import('./readers.ts')).readerRoutes,
  'reader-notes': async (): Promise<RouteSpec[]> => (await import('./reader-notes.ts')).readerNoteRoutes,
  'reading-sessions': async (): Promise<RouteSpec[]> => (await import('./reading-sessions.ts')).readingSessionRoutes,
  'custom-fonts': async (): Promise<RouteSpec[]> => (await import('./custom-fonts.ts')).customFontRoutes,
  'email': async (): Promise<RouteSpec[]> => (await import('./email.ts')).emailRoutes,
  'kobo-settings': async (): Promise<RouteSpec[]> => (await import('./kobo-settings.ts')).koboSettingsRoutes,
  'kobo': async (): Promise<RouteSpec[]> => (await import('./kobo.ts')).koboRoutes,
  'metadata-providers': async (): Promise<RouteSpec[]> => (await import('./metadata-providers.ts')).metadataProviderRoutes,
  'metadata-tasks': async (): Promise<RouteSpec[]> => (await import('./metadata-tasks.ts')).metadataTaskRoutes,
  'tasks': async (): Promise<RouteSpec[]> => (await import('./tasks.ts')).taskRoutes,
  'reviews': async (): Promise<RouteSpec[]> => (await import('./reviews.ts')).reviewRoutes,
  'cover-search': async (): Promise<RouteSpec[]> => (await import('./cover-search.ts')).coverSearchRoutes,
  'metadata-edit': async (): Promise<RouteSpec[]> => (await import('./metadata-edit.ts')).metadataEditRoutes,
  'covers': async (): Promise<RouteSpec[]> => (await import('./covers.ts')).coverRoutes,
  'app-books': async (): Promise<RouteSpec[]> => (await import('./app-books.ts')).appBookRoutes,
  'app-catalog': async (): Promise<RouteSpec[]> => (await import('./app-catalog.ts')).appCatalogRoutes,
  'app-shelves': async (): Promise<RouteSpec[]> => (await import('./app-shelves.ts')).appShelfRoutes,
  'app-notebook': async (): Promise<RouteSpec[]> => (await import('./app-notebook.ts')).appNotebookRoutes,
  'app-user': async (): Promise<RouteSpec[]> => (await import('./app-user.ts')).appUserRoutes,
  'user-stats': async (): Promise<RouteSpec[]> => (await import('./user-stats.ts')).userStatsRoutes,
  'oidc': async (): Promise<RouteSpec[]> => (await import('./oidc.ts')).oidcRoutes,
  'oidc-group-mappings': async (): Promise<RouteSpec[]> => (await import('./oidc-group-mappings.ts')).oidcGroupMappingRoutes,
  'magic-shelves': async (): Promise<RouteSpec[]> => (await import('./magic-shelves.ts')).magicShelfRoutes,
  'icons': async (): Promise<RouteSpec[]> => (await import('./icons.ts')).iconRoutes,
  'additional-files': async (): Promise<RouteSpec[]> => (await import('./additional-files.ts')).additionalFileRoutes,
  'book-content': async (): Promise<RouteSpec[]> => (await import('./book-content.ts')).bookContentRoutes,
  'audit-logs': async (): Promise<RouteSpec[]> => (await import('./audit-logs.ts')).auditLogRoutes,
  'data-export': async (): Promise<RouteSpec[]> => (await import('./data-export.ts')).dataExportRoutes,
  'hardcover-sync-settings': async (): Promise<RouteSpec[]> => (await import('./hardcover-sync-settings.ts')).hardcoverSyncSettingsRoutes,
} as const satisfies Record<string, () => Promise<RouteSpec[]>>;

export type RouteGroup = keyof typeof ROUTE_GROUPS;

/** Every route, in the table's order (loads every group). */
export async function allRoutes(): Promise<RouteSpec[]> {
  return (await Promise.all(Object.values(ROUTE_GROUPS).map((load) => load()))).flat();
}

/** Each group with its routes, in the table's order. */
export async function routeGroups(): Promise<[RouteGroup, RouteSpec[]][]> {
  const groups = Object.keys(ROUTE_GROUPS) as RouteGroup[];
  return Promise.all(groups.map(async (group) => [group, await ROUTE_GROUPS[group]()] as [RouteGroup, RouteSpec[]]));
}

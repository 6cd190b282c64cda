// The route table: every group's routes, in one list the app registers and the permission test walks.
import type { RouteSpec } from '../route-spec.ts';
import { bookdropRoutes } from './bookdrop.ts';
import { uploadRoutes } from './uploads.ts';
import { duplicateRoutes } from './duplicates.ts';
import { readingRoutes } from './reading.ts';
import { settingsRoutes } from './settings.ts';
import { shelfRoutes } from './shelves.ts';
import { systemRoutes } from './system.ts';
import { uiReadRoutes } from './ui-reads.ts';
import { accountRoutes } from './users.ts';
import { libraryRoutes } from './libraries.ts';
import { pathRoutes } from './paths.ts';
import { bookRoutes } from './books.ts';
import { bookFileRoutes } from './book-files.ts';
import { mediaRoutes } from './media.ts';
import { fileMoveRoutes } from './file-moves.ts';
import { koreaderUserRoutes } from './koreader-users.ts';
import { kosyncRoutes } from './kosync.ts';
import { opdsRoutes } from './opds.ts';
import { komgaRoutes } from './komga.ts';
import { sidecarRoutes } from './sidecars.ts';
import { contentRestrictionRoutes } from './content-restrictions.ts';
import { readerRoutes } from './readers.ts';
import { readerNoteRoutes } from './reader-notes.ts';
import { readingSessionRoutes } from './reading-sessions.ts';
import { customFontRoutes } from './custom-fonts.ts';
import { emailRoutes } from './email.ts';
import { koboRoutes } from './kobo.ts';
import { koboSettingsRoutes } from './kobo-settings.ts';
import { metadataProviderRoutes } from './metadata-providers.ts';
import { metadataTaskRoutes } from './metadata-tasks.ts';
import { taskRoutes } from './tasks.ts';
import { reviewRoutes } from './reviews.ts';
import { coverSearchRoutes } from './cover-search.ts';
import { metadataEditRoutes } from './metadata-edit.ts';
import { coverRoutes } from './covers.ts';
import { appBookRoutes } from './app-books.ts';
import { appCatalogRoutes } from './app-catalog.ts';
import { appShelfRoutes } from './app-shelves.ts';
import { appNotebookRoutes } from './app-notebook.ts';
import { appUserRoutes } from './app-user.ts';
import { userStatsRoutes } from './user-stats.ts';

export function allRoutes(): RouteSpec[] {
  return [...systemRoutes, ...accountRoutes, ...duplicateRoutes, ...readingRoutes, ...shelfRoutes, ...settingsRoutes, ...uiReadRoutes, ...libraryRoutes, ...pathRoutes, ...bookRoutes, ...bookFileRoutes, ...mediaRoutes, ...fileMoveRoutes, ...koreaderUserRoutes, ...kosyncRoutes, ...opdsRoutes, ...komgaRoutes, ...bookdropRoutes, ...uploadRoutes, ...sidecarRoutes, ...contentRestrictionRoutes, ...readerRoutes, ...readerNoteRoutes, ...readingSessionRoutes, ...customFontRoutes, ...emailRoutes, ...koboSettingsRoutes, ...koboRoutes, ...metadataProviderRoutes, ...metadataTaskRoutes, ...taskRoutes, ...reviewRoutes, ...coverSearchRoutes, ...metadataEditRoutes, ...coverRoutes, ...appBookRoutes, ...appCatalogRoutes, ...appShelfRoutes, ...appNotebookRoutes, ...appUserRoutes, ...userStatsRoutes];
}

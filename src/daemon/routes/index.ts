// The route table: every group's routes, in one list the app registers and the permission test walks.
import type { RouteSpec } from '../route-spec.ts';
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
import { contentRestrictionRoutes } from './content-restrictions.ts';
import { readerRoutes } from './readers.ts';

export function allRoutes(): RouteSpec[] {
  return [...systemRoutes, ...accountRoutes, ...duplicateRoutes, ...readingRoutes, ...shelfRoutes, ...settingsRoutes, ...uiReadRoutes, ...libraryRoutes, ...pathRoutes, ...bookRoutes, ...bookFileRoutes, ...mediaRoutes, ...fileMoveRoutes, ...koreaderUserRoutes, ...kosyncRoutes, ...opdsRoutes, ...komgaRoutes, ...contentRestrictionRoutes, ...readerRoutes];
}

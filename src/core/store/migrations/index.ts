// Forward-only migrations, applied in name order. Never edit one that has shipped; add the next number.
import type { Migration, MigrationProvider } from 'kysely/migration';
import * as initial from './001-initial.ts';
import * as auth from './002-auth.ts';
import * as readerState from './005-reader-state.ts';
import * as moveJournal from './006-move-journal.ts';
import * as koreader from './007-koreader.ts';
import * as listIndexes from './008-list-indexes.ts';
import * as opdsUsers from './009-opds-users.ts';
import * as kobo from './010-kobo.ts';
import * as bookdrop from './011-bookdrop.ts';
import * as metadataTasks from './012-metadata-tasks.ts';
import * as bookReviews from './013-book-reviews.ts';

import * as readerNotes from './016-reader-notes.ts';
import * as email from './018-email.ts';
import * as readingStatsIndexes from './019-reading-stats-indexes.ts';
import * as initialHashIndex from './020-initial-hash-index.ts';
import * as oidc from './021-oidc.ts';
import * as auditLog from './024-audit-log.ts';
import * as sessions from './025-sessions.ts';
import * as bookdropImportTrace from './026-bookdrop-import-trace.ts';
import * as bookdropOriginalLeft from './049-bookdrop-original-left.ts';
import * as komga from './028-komga.ts';
import * as importIdMap from './031-import-id-map.ts';
import * as backupSchedule from './030-backup-schedule.ts';
import * as searchKeys from './029-search-keys.ts';
import * as eventOutbox from './027-event-outbox.ts';
import * as opdsUsernameNocase from './035-opds-username-nocase.ts';
import * as leases from './032-leases.ts';
import * as seriesMembersIndex from './039-series-members-index.ts';
import * as coverThumbnailBacklog from './050-cover-thumbnail-backlog.ts';
import * as komgaSeriesDto from './051-komga-series-dto.ts';
import * as readingStateVersion from './052-reading-state-version.ts';
import * as komgaUnknownSeriesLog from './053-komga-unknown-series-log.ts';
import * as bookVersion from './054-book-version.ts';
import * as bookRowBeforeVersion from './055-book-row-before-version.ts';
import * as hardcoverPush from './036-hardcover-push.ts';
import * as signInFailures from './040-sign-in-failures.ts';
import * as seriesOrderIndex from './043-series-order-index.ts';
import * as komgaSeriesSummary from './044-komga-series-summary.ts';
import * as koboSnapshotLineage from './045-kobo-snapshot-lineage.ts';
const MIGRATIONS: Record<string, Migration> = {
  '001-initial': initial,
  '002-auth': auth,
  '005-reader-state': readerState,
  '006-move-journal': moveJournal,
  '007-koreader': koreader,
  '008-list-indexes': listIndexes,
  '009-opds-users': opdsUsers,
  '010-kobo': kobo,
  '011-bookdrop': bookdrop,
  '012-metadata-tasks': metadataTasks,
  '013-book-reviews': bookReviews,
  '016-reader-notes': readerNotes,
  '018-email': email,
  '019-reading-stats-indexes': readingStatsIndexes,
  '020-initial-hash-index': initialHashIndex,
  '021-oidc': oidc,
  '024-audit-log': auditLog,
  '025-sessions': sessions,
  '026-bookdrop-import-trace': bookdropImportTrace,
  '028-komga': komga,
  '031-import-id-map': importIdMap,
  '030-backup-schedule': backupSchedule,
  '029-search-keys': searchKeys,
  '027-event-outbox': eventOutbox,
  '035-opds-username-nocase': opdsUsernameNocase,
  '032-leases': leases,
  '039-series-members-index': seriesMembersIndex,
  '036-hardcover-push': hardcoverPush,
  '040-sign-in-failures': signInFailures,
  '043-series-order-index': seriesOrderIndex,
  '044-komga-series-summary': komgaSeriesSummary,
  '045-kobo-snapshot-lineage': koboSnapshotLineage,
  '049-bookdrop-original-left': bookdropOriginalLeft,
  '050-cover-thumbnail-backlog': coverThumbnailBacklog,
  '051-komga-series-dto': komgaSeriesDto,
  '052-reading-state-version': readingStateVersion,
  '053-komga-unknown-series-log': komgaUnknownSeriesLog,
  '054-book-version': bookVersion,
  '055-book-row-before-version': bookRowBeforeVersion,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};

export const LATEST_MIGRATION = Object.keys(MIGRATIONS).sort().at(-1) ?? '';

// Forward-only migrations, applied in name order. Never edit one that has shipped; add the next number.
import type { Migration, MigrationProvider } from 'kysely/migration';
import * as initial from './001-initial.ts';
import * as auth from './002-auth.ts';
import * as readerState from './005-reader-state.ts';
import * as moveJournal from './006-move-journal.ts';
import * as koreader from './007-koreader.ts';
import * as listIndexes from './008-list-indexes.ts';
import * as opdsUsers from './009-opds-users.ts';

const MIGRATIONS: Record<string, Migration> = {
  '001-initial': initial,
  '002-auth': auth,
  '005-reader-state': readerState,
  '006-move-journal': moveJournal,
  '007-koreader': koreader,
  '008-list-indexes': listIndexes,
  '009-opds-users': opdsUsers,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};

export const LATEST_MIGRATION = Object.keys(MIGRATIONS).sort().at(-1) ?? '';

// Forward-only migrations, applied in name order. Never edit one that has shipped; add the next number.
import type { Migration, MigrationProvider } from 'kysely/migration';
import * as initial from './001-initial.ts';

const MIGRATIONS: Record<string, Migration> = {
  '001-initial': initial,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};

export const LATEST_MIGRATION = Object.keys(MIGRATIONS).sort().at(-1) ?? '';

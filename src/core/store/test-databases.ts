// For the test suite only (BINDERY_TEST_DATABASE_SERVER): every catalog file path a test opens becomes a database of
// its own on a throwaway PostgreSQL server, copied from a migrated template, so the whole suite runs on that engine
// unchanged. Never set in production.
import { createHash } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import pg from 'pg';
import { prepareDataDir } from './file-modes.ts';

export const TEMPLATE_DATABASE = 'bindery_template';

const known = new Map<string, Promise<string>>();

/** The database URL standing for the SQLite file `catalogPath`, created from the template on first use. */
export function testDatabaseFor(serverUrl: string, catalogPath: string): Promise<string> {
  const absolute = resolve(catalogPath);
  let pending = known.get(absolute);
  if (!pending) {
    pending = create(serverUrl, absolute);
    known.set(absolute, pending);
    pending.catch(() => known.delete(absolute));
  }
  return pending;
}

/** The database that stands for a catalog file path. */
export function testDatabaseName(catalogPath: string): string {
  return `t_${createHash('sha256').update(resolve(catalogPath)).digest('hex').slice(0, 24)}`;
}

async function create(serverUrl: string, catalogPath: string): Promise<string> {
  prepareDataDir(dirname(catalogPath));
  const name = testDatabaseName(catalogPath);
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await client.query(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE_DATABASE} STRATEGY file_copy`);
        break;
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (code === '42P04') break; // another process of the same test created it
        if (code === '55006' && attempt < 100) {
          // The template is being copied by someone else at this instant.
          await new Promise((r) => setTimeout(r, 20 + Math.random() * 40));
          continue;
        }
        throw error;
      }
    }
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

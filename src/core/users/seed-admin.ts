// Headless first run: `bindery serve` creates the first administrator from environment variables when no user exists.
import { readFileSync } from 'node:fs';
import type { Db } from '../store/store.ts';
import { countUsers, createFirstAdmin, UserError } from './users.ts';

export interface SeededAdmin {
  id: number;
  username: string;
}

/** Strips the one line break that files and `echo` leave at the end. */
export function trimPasswordText(text: string): string {
  return text.replace(/\r?\n$/, '');
}

function seedPassword(env: NodeJS.ProcessEnv): string {
  if (env.BINDERY_ADMIN_PASSWORD !== undefined && env.BINDERY_ADMIN_PASSWORD !== '') return env.BINDERY_ADMIN_PASSWORD;
  const file = env.BINDERY_ADMIN_PASSWORD_FILE;
  if (!file) throw new UserError('INVALID', 'BINDERY_ADMIN_USERNAME is set but neither BINDERY_ADMIN_PASSWORD nor BINDERY_ADMIN_PASSWORD_FILE is');
  try {
    return trimPasswordText(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new UserError('INVALID', `cannot read BINDERY_ADMIN_PASSWORD_FILE ${file}: ${(error as Error).message}`);
  }
}

/**
 * Creates the administrator named by BINDERY_ADMIN_USERNAME (password from BINDERY_ADMIN_PASSWORD or
 * BINDERY_ADMIN_PASSWORD_FILE, optional BINDERY_ADMIN_EMAIL and BINDERY_ADMIN_NAME) when the catalog has no user yet.
 * Does nothing when the username is unset or users exist.
 */
export async function seedAdminFromEnv(db: Db, env: NodeJS.ProcessEnv): Promise<SeededAdmin | undefined> {
  const username = env.BINDERY_ADMIN_USERNAME?.trim();
  if (!username) return undefined;
  if ((await countUsers(db)) > 0) return undefined;
  const password = seedPassword(env);
  try {
    const id = await createFirstAdmin(db, { username, password, name: env.BINDERY_ADMIN_NAME?.trim() || username, email: env.BINDERY_ADMIN_EMAIL?.trim() || null });
    return { id, username };
  } catch (error) {
    // Another process completed setup in the meantime: nothing to seed.
    if (error instanceof UserError && error.code === 'CONFLICT' && (await countUsers(db)) > 0) return undefined;
    throw error;
  }
}

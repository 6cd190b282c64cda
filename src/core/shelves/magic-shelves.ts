// Magic shelves: saved rule sets (behaviors.md §3), each user's own; an administrator may make one public so every user
// sees it. The web UI evaluates them client-side; OPDS, Komga, Kobo and the app API through opds/magic-shelf-rules.ts.
import { sql } from 'kysely';
import { CodedError } from '../coded-error.ts';
import { isAdmin, type Principal } from '../auth/principal.ts';
import type { Db } from '../store/store.ts';
import { nowIso } from '../time.ts';
import { magicShelfRuleProblems } from './magic-shelf-validation.ts';
import { constraintViolation } from '../store/constraint-errors.ts';

export interface MagicShelfRow {
  id: number;
  user_id: number;
  name: string;
  icon: string | null;
  icon_type: string | null;
  filter_json: string;
  is_public: number;
}

/** INVALID carries the problems, one `<property>: <message>` each, for the error's details. */
export type MagicShelfErrorCode = 'NOT_FOUND' | 'FORBIDDEN' | 'NAME_TAKEN' | 'DATA_CONFLICT' | 'INVALID';

export class MagicShelfError extends CodedError<MagicShelfErrorCode> {
  readonly details: string[];
  constructor(code: MagicShelfErrorCode, message: string, details: string[] = []) {
    super(code, message);
    this.details = details;
  }
}

export interface MagicShelfInput {
  /** Present: update that shelf; absent or null: create one. */
  id?: number | null;
  name: string;
  icon?: string | null;
  iconType?: string | null;
  filterJson: string;
  isPublic?: boolean | null;
}

const COLUMNS = ['id', 'user_id', 'name', 'icon', 'icon_type', 'filter_json', 'is_public'] as const;

/** Grimmory's `MagicShelf` JSON (every property present). */
export function magicShelfJson(row: Omit<MagicShelfRow, 'user_id'>): Record<string, unknown> {
  return { id: row.id, name: row.name, icon: row.icon, iconType: row.icon_type, filterJson: row.filter_json, isPublic: row.is_public === 1 };
}

/** The user's own magic shelves, then other users' public ones. */
export async function listMagicShelves(db: Db, userId: number): Promise<Record<string, unknown>[]> {
  const own = await db.selectFrom('magic_shelf').select(COLUMNS).where('user_id', '=', userId).orderBy('id').execute();
  const shared = await db.selectFrom('magic_shelf').select(COLUMNS).where('is_public', '=', 1).where('user_id', '!=', userId).orderBy('id').execute();
  return [...own, ...shared].map(magicShelfJson);
}

export async function findMagicShelf(db: Db, id: number): Promise<MagicShelfRow | undefined> {
  return db.selectFrom('magic_shelf').select(COLUMNS).where('id', '=', id).executeTakeFirst();
}

const notFound = (): MagicShelfError => new MagicShelfError('NOT_FOUND', 'Shelf not found');

/**
 * One shelf for its owner, for anyone when it is public, and for administrators. (Grimmory returns any shelf to
 * anyone who knows its id; another user's private rules are not theirs to read.)
 */
export async function readMagicShelf(db: Db, principal: Principal, id: number): Promise<Record<string, unknown>> {
  const row = await findMagicShelf(db, id);
  if (!row) throw notFound();
  if (row.user_id !== principal.userId && row.is_public !== 1 && !isAdmin(principal)) throw new MagicShelfError('FORBIDDEN', 'You are not authorized to access this shelf');
  return magicShelfJson(row);
}

/** Names are unique per user regardless of letter case, as under Grimmory's database collation. */
async function nameTaken(db: Db, userId: number, name: string, exceptId?: number): Promise<boolean> {
  let query = db.selectFrom('magic_shelf').select('id').where('user_id', '=', userId).where(sql<boolean>`lower(name) = lower(${name})`);
  if (exceptId !== undefined) query = query.where('id', '!=', exceptId);
  return (await query.executeTakeFirst()) !== undefined;
}

function checkInput(input: MagicShelfInput): void {
  const problems = magicShelfRuleProblems(input.filterJson).map((p) => `filterJson: ${p}`);
  if (input.name.trim() === '') problems.unshift('name: must not be blank');
  if (problems.length > 0) throw new MagicShelfError('INVALID', 'Validation error', problems);
}

const isUniqueClash = (error: unknown): boolean => constraintViolation(error) === 'unique';

/**
 * Creates the caller's shelf, or updates one of theirs (Grimmory's createOrUpdateShelf). Only administrators make a
 * shelf public or change a public one (the web UI offers the switch to them alone; Grimmory's server checked only the
 * latter). Rules are checked first: a shelf whose rules cannot be understood is never stored.
 */
export async function saveMagicShelf(db: Db, principal: Principal, input: MagicShelfInput): Promise<Record<string, unknown>> {
  checkInput(input);
  const values = { name: input.name, icon: input.icon ?? null, icon_type: input.iconType ?? null, filter_json: input.filterJson, is_public: input.isPublic === true ? 1 : 0 };
  if (values.is_public === 1 && !isAdmin(principal)) throw new MagicShelfError('FORBIDDEN', 'Access denied.');
  try {
    return await db.transaction().execute(async (trx) => {
      if (input.id !== undefined && input.id !== null) {
        const existing = await findMagicShelf(trx, input.id);
        if (!existing) throw notFound();
        if (existing.user_id !== principal.userId) throw new MagicShelfError('FORBIDDEN', 'You are not authorized to update this shelf');
        if (existing.is_public === 1 && !isAdmin(principal)) throw new MagicShelfError('FORBIDDEN', 'You are not authorized to update a public shelf');
        if (await nameTaken(trx, principal.userId, input.name, existing.id)) throw new MagicShelfError('DATA_CONFLICT', 'A data conflict occurred. The operation could not be completed.');
        const row = await trx.updateTable('magic_shelf').set({ ...values, updated_at: nowIso() }).where('id', '=', existing.id).returning(COLUMNS).executeTakeFirstOrThrow();
        return magicShelfJson(row);
      }
      if (await nameTaken(trx, principal.userId, input.name)) throw new MagicShelfError('NAME_TAKEN', 'A shelf with the same name already exists for this user.');
      const now = nowIso();
      const row = await trx.insertInto('magic_shelf').values({ ...values, user_id: principal.userId, created_at: now, updated_at: now }).returning(COLUMNS).executeTakeFirstOrThrow();
      return magicShelfJson(row);
    });
  } catch (error) {
    if (isUniqueClash(error)) throw new MagicShelfError('DATA_CONFLICT', 'A data conflict occurred. The operation could not be completed.');
    throw error;
  }
}

/** Deletes one of the caller's own shelves (public or not); nobody else's. */
export async function deleteMagicShelf(db: Db, principal: Principal, id: number): Promise<void> {
  const row = await findMagicShelf(db, id);
  if (!row) throw notFound();
  if (row.user_id !== principal.userId) throw new MagicShelfError('FORBIDDEN', 'You are not authorized to delete this shelf');
  await db.deleteFrom('magic_shelf').where('id', '=', id).execute();
}

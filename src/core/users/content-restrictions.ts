// Content restrictions an admin sets per user (behaviors.md §14): which categories, tags, moods, age or content
// ratings the user's book list excludes, or is limited to. Visibility applies them (src/core/auth/visibility.ts).
import { userNotFound } from '../auth/account-error.ts';
import type { ContentRestriction } from '../auth/principal.ts';
import { CodedError } from '../coded-error.ts';
import type { Db } from '../store/store.ts';

export const RESTRICTION_TYPES = ['CATEGORY', 'TAG', 'MOOD', 'AGE_RATING', 'CONTENT_RATING'] as const;
export const RESTRICTION_MODES = ['EXCLUDE', 'ALLOW_ONLY'] as const;

export interface StoredRestriction {
  id: number;
  userId: number;
  restrictionType: ContentRestriction['type'];
  mode: ContentRestriction['mode'];
  value: string;
  /** ISO-8601 UTC instant. */
  createdAt: string;
}

export interface RestrictionInput {
  restrictionType: ContentRestriction['type'];
  mode: ContentRestriction['mode'];
  value: string;
}

export class RestrictionError extends CodedError<'NOT_FOUND' | 'DUPLICATE' | 'INVALID'> {}

interface Row {
  id: number;
  user_id: number;
  restriction_type: string;
  mode: string;
  value: string;
  created_at: string;
}

function fromRow(row: Row): StoredRestriction {
  return { id: row.id, userId: row.user_id, restrictionType: row.restriction_type as StoredRestriction['restrictionType'], mode: row.mode as StoredRestriction['mode'], value: row.value, createdAt: row.created_at };
}

/** Trims the value and refuses an empty one; the type and mode are checked by the caller's schema. */
function normalized(input: RestrictionInput): RestrictionInput {
  const value = input.value.trim();
  if (value === '') throw new RestrictionError('INVALID', 'A content restriction needs a value');
  return { ...input, value };
}

async function requireUser(db: Db, userId: number): Promise<void> {
  const user = await db.selectFrom('users').select('id').where('id', '=', userId).executeTakeFirst();
  if (!user) throw userNotFound(userId);
}

export async function listRestrictions(db: Db, userId: number): Promise<StoredRestriction[]> {
  await requireUser(db, userId);
  const rows = await db.selectFrom('user_content_restriction').selectAll().where('user_id', '=', userId).orderBy('id').execute();
  return rows.map(fromRow);
}

/** Adds one restriction; the same type and value twice is refused (one mode per value). */
export async function addRestriction(db: Db, userId: number, input: RestrictionInput): Promise<StoredRestriction> {
  const restriction = normalized(input);
  return db.transaction().execute(async (tx) => {
    await requireUser(tx, userId);
    const clash = await tx
      .selectFrom('user_content_restriction')
      .select('id')
      .where('user_id', '=', userId)
      .where('restriction_type', '=', restriction.restrictionType)
      .where('value', '=', restriction.value)
      .executeTakeFirst();
    if (clash) throw new RestrictionError('DUPLICATE', `User ${userId} already has a ${restriction.restrictionType} restriction for "${restriction.value}"`);
    const row = await tx
      .insertInto('user_content_restriction')
      .values({ user_id: userId, restriction_type: restriction.restrictionType, mode: restriction.mode, value: restriction.value })
      .returningAll()
      .executeTakeFirstOrThrow();
    return fromRow(row);
  });
}

/** Replaces all of the user's restrictions with `inputs` in one transaction (later duplicates win). */
export async function replaceRestrictions(db: Db, userId: number, inputs: readonly RestrictionInput[]): Promise<StoredRestriction[]> {
  const byKey = new Map<string, RestrictionInput>();
  for (const input of inputs.map(normalized)) byKey.set(`${input.restrictionType}\u0000${input.value}`, input);
  return db.transaction().execute(async (tx) => {
    await requireUser(tx, userId);
    await tx.deleteFrom('user_content_restriction').where('user_id', '=', userId).execute();
    const stored: StoredRestriction[] = [];
    for (const input of byKey.values()) {
      const row = await tx
        .insertInto('user_content_restriction')
        .values({ user_id: userId, restriction_type: input.restrictionType, mode: input.mode, value: input.value })
        .returningAll()
        .executeTakeFirstOrThrow();
      stored.push(fromRow(row));
    }
    return stored;
  });
}

export async function deleteRestriction(db: Db, userId: number, restrictionId: number): Promise<void> {
  await requireUser(db, userId);
  const result = await db.deleteFrom('user_content_restriction').where('user_id', '=', userId).where('id', '=', restrictionId).executeTakeFirst();
  if (result.numDeletedRows === 0n) throw new RestrictionError('NOT_FOUND', `Content restriction ${restrictionId} of user ${userId} not found`);
}

export async function deleteAllRestrictions(db: Db, userId: number): Promise<void> {
  await requireUser(db, userId);
  await db.deleteFrom('user_content_restriction').where('user_id', '=', userId).execute();
}

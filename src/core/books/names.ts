// Authors, categories, tags, moods and comic people are shared rows looked up by exact name.
import type { Transaction } from 'kysely';
import type { DB } from '../store/db-types.ts';

export type NameTable = 'author' | 'category' | 'tag' | 'mood' | 'comic_character' | 'comic_team' | 'comic_location' | 'comic_creator';

/** Ids for the names, creating missing rows; order follows `names`. */
export async function nameIds(trx: Transaction<DB>, table: NameTable, names: string[]): Promise<number[]> {
  if (names.length === 0) return [];
  await trx.insertInto(table).values(names.map((name) => ({ name }))).onConflict((oc) => oc.column('name').doNothing()).execute();
  const rows = await trx.selectFrom(table).select(['id', 'name']).where('name', 'in', names).execute();
  const byName = new Map(rows.map((r) => [r.name, r.id]));
  return names.map((n) => byName.get(n)).filter((id): id is number => id !== undefined);
}

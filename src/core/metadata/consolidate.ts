// The metadata manager: merging several spellings of an author, category, mood, tag, series, publisher or language
// into one, and deleting values from every book that has them. Values match ignoring case, as in Grimmory. Only the
// books the caller may see are changed; a name nobody uses any more is removed from the catalog.
import type { Principal } from '../auth/principal.ts';
import { isAdmin } from '../auth/principal.ts';
import { visibleBookFilter } from '../auth/visibility.ts';
import { kyselyExec, type SqlExec } from '../store/sql-exec.ts';
import type { Db } from '../store/store.ts';
import { nowIso } from '../time.ts';
import { MetadataEditError, NAME_FIELDS, type NameField } from './metadata-fields.ts';
import { addName, renameName } from '../books/names.ts';
import { refreshSearchText } from '../books/search-text.ts';
import { currentNames, replaceNames } from './names-store.ts';
import { emitEvent } from '../events/live-events.ts';

export const MERGE_METADATA_TYPES = ['authors', 'categories', 'moods', 'tags', 'series', 'publishers', 'languages'] as const;
export type MergeMetadataType = (typeof MERGE_METADATA_TYPES)[number];

const COLUMN_TYPES: Record<'series' | 'publishers' | 'languages', { column: string; label: string }> = {
  series: { column: 'series_name', label: 'Series' },
  publishers: { column: 'publisher', label: 'Publisher' },
  languages: { column: 'language', label: 'Language' },
};

/** Book ids among `candidates` the principal may change. */
async function inScope(db: Db, principal: Principal, candidates: number[]): Promise<Set<number>> {
  if (isAdmin(principal) || candidates.length === 0) return new Set(candidates);
  const out = new Set<number>();
  for (let i = 0; i < candidates.length; i += 500) {
    const rows = await db.selectFrom('book').select('id').where('id', 'in', candidates.slice(i, i + 500)).where(visibleBookFilter(principal)).execute();
    for (const r of rows) out.add(r.id);
  }
  return out;
}

function clean(values: readonly string[]): string[] {
  return [...new Set(values.map((v) => v.trim()).filter((v) => v !== ''))];
}

async function findName(exec: SqlExec, field: NameField, name: string): Promise<{ id: number; name: string } | undefined> {
  // The exact spelling first: another row may differ from it only in case.
  const row = await exec.get(`select id, name from ${field.table} where lower(name) = lower(?) order by name = ? desc, id limit 1`, [name, name]);
  return row ? { id: row.id as number, name: row.name as string } : undefined;
}

async function booksWithName(exec: SqlExec, field: NameField, id: number): Promise<number[]> {
  return (await exec.all(`select book_id from ${field.mapping} where ${field.idColumn} = ?`, [id])).map((r) => r.book_id as number);
}

async function dropIfUnused(exec: SqlExec, field: NameField, id: number): Promise<void> {
  const used = await exec.get(`select 1 as used from ${field.mapping} where ${field.idColumn} = ? limit 1`, [id]);
  if (!used) await exec.run(`delete from ${field.table} where id = ?`, [id]);
}

async function touch(exec: SqlExec, bookIds: Iterable<number>): Promise<void> {
  const now = nowIso();
  const ids = [...bookIds];
  for (const id of ids) await exec.run('update book set metadata_updated_at = ? where id = ?', [now, id]);
  await emitEvent(exec, { kind: 'books-changed', bookIds: ids });
}

/**
 * Replaces each of `valuesToMerge` by `targetValues` on the books that have it. Returns the ids of the books changed.
 * Series, publishers and languages take exactly one target.
 */
export async function consolidateMetadata(db: Db, principal: Principal, type: MergeMetadataType, targetValues: readonly string[], valuesToMerge: readonly string[]): Promise<number[]> {
  const targets = clean(targetValues);
  const merged = clean(valuesToMerge);
  if (type === 'series' || type === 'publishers' || type === 'languages') {
    const { column, label } = COLUMN_TYPES[type];
    if (targets.length !== 1) throw new MetadataEditError('INVALID', `${label} merge requires exactly one target value`);
    return setColumn(db, principal, column, merged, targets[0] as string);
  }
  const field = NAME_FIELDS[type];
  return db.transaction().execute(async (trx) => {
    const exec = kyselyExec(trx);
    const targetIds: number[] = [];
    for (const name of targets) {
      const existing = await findName(exec, field, name);
      // The target's spelling is the one asked for.
      if (existing && existing.name !== name) await renameName(exec, field.table, existing.id, name);
      targetIds.push(existing?.id ?? (await addName(exec, field.table, name)));
    }
    const changed = new Set<number>();
    for (const name of merged) {
      const old = await findName(exec, field, name);
      if (!old || targetIds.includes(old.id)) continue;
      const books = await inScope(trx, principal, await booksWithName(exec, field, old.id));
      for (const bookId of books) {
        const current = await currentNames(exec, bookId, field);
        const next: string[] = [];
        for (const n of current) {
          for (const replacement of n === old.name ? targets : [n]) if (!next.includes(replacement)) next.push(replacement);
        }
        await replaceNames(exec, bookId, field, next);
        changed.add(bookId);
      }
      await dropIfUnused(exec, field, old.id);
    }
    if (field.key === 'authors') await refreshSearchText(exec, [...changed]);
    await touch(exec, changed);
    return [...changed];
  });
}

async function setColumn(db: Db, principal: Principal, column: string, values: string[], to: string | null, alsoNull: string[] = []): Promise<number[]> {
  return db.transaction().execute(async (trx) => {
    const exec = kyselyExec(trx);
    const changed = new Set<number>();
    for (const value of values) {
      const rows = await exec.all(`select book_id from book_metadata where lower(${column}) = lower(?)`, [value]);
      const books = await inScope(trx, principal, rows.map((r) => r.book_id as number));
      for (const bookId of books) {
        await exec.run(`update book_metadata set ${[column, ...alsoNull].map((c) => `${c} = ?`).join(', ')} where book_id = ?`, [to, ...alsoNull.map(() => null), bookId]);
        changed.add(bookId);
      }
    }
    if (column === 'series_name') await refreshSearchText(exec, [...changed]);
    await touch(exec, changed);
    return [...changed];
  });
}

/** Removes the values from every book (in scope) that has them. Returns the ids of the books changed. */
export async function deleteMetadataValues(db: Db, principal: Principal, type: MergeMetadataType, valuesToDelete: readonly string[]): Promise<number[]> {
  const values = clean(valuesToDelete);
  if (type === 'series') return setColumn(db, principal, 'series_name', values, null, ['series_number', 'series_total']);
  if (type === 'publishers') return setColumn(db, principal, 'publisher', values, null);
  if (type === 'languages') return setColumn(db, principal, 'language', values, null);
  const field = NAME_FIELDS[type];
  return db.transaction().execute(async (trx) => {
    const exec = kyselyExec(trx);
    const changed = new Set<number>();
    for (const name of values) {
      const old = await findName(exec, field, name);
      if (!old) continue;
      const books = await inScope(trx, principal, await booksWithName(exec, field, old.id));
      for (const bookId of books) {
        await exec.run(`delete from ${field.mapping} where book_id = ? and ${field.idColumn} = ?`, [bookId, old.id]);
        changed.add(bookId);
      }
      await dropIfUnused(exec, field, old.id);
    }
    if (field.key === 'authors') await refreshSearchText(exec, [...changed]);
    await touch(exec, changed);
    return [...changed];
  });
}

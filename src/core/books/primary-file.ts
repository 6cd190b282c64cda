// Which of a book's files speaks for it: the best format by the library's priority, then the oldest file.
import { sql, type RawBuilder } from 'kysely';
import type { BookFileType } from '../formats/types.ts';
import { DEFAULT_FORMAT_PRIORITY } from '../libraries/libraries.ts';

export interface RankedFile {
  id: number;
  book_type: string | null;
  missing_at?: string | null;
}

export function formatRank(bookType: string | null, priority: readonly BookFileType[] | null): number {
  const order = priority && priority.length > 0 ? priority : DEFAULT_FORMAT_PRIORITY;
  const i = order.indexOf(bookType as BookFileType);
  return i === -1 ? order.length : i;
}

export function pickPrimary<T extends RankedFile>(files: T[], priority: readonly BookFileType[] | null): T | undefined {
  // Most books have one file: the sort below would pick it too.
  if (files.length < 2) return files[0];
  const present = files.filter((f) => !f.missing_at);
  const pool = present.length > 0 ? present : files;
  return [...pool].sort((a, b) => formatRank(a.book_type, priority) - formatRank(b.book_type, priority) || a.id - b.id)[0];
}

/** A file's format rank under one priority list, in SQL: the `formatRank` of `file.book_type`. */
function formatRankSql(file: string, priority: readonly BookFileType[] | null): RawBuilder<number> {
  const order = priority && priority.length > 0 ? priority : DEFAULT_FORMAT_PRIORITY;
  const cases = order.flatMap((type, i) => (order.indexOf(type) !== i ? [] : [type === null ? sql`WHEN ${sql.ref(`${file}.book_type`)} IS NULL THEN ${sql.lit(i)}` : sql`WHEN ${sql.ref(`${file}.book_type`)} = ${String(type)} THEN ${sql.lit(i)}`]));
  return sql<number>`CASE ${sql.join(cases, sql` `)} ELSE ${sql.lit(order.length)} END`;
}

/**
 * The order pickPrimary chooses in, as SQL: `ORDER BY` this over a book's files puts its primary first (present files
 * first, then the format rank under its library's priority, then the oldest). `priorities` holds each library's list.
 */
export function primaryOrderSql(file: string, libraryId: string, priorities: ReadonlyMap<number, readonly BookFileType[] | null>): RawBuilder<unknown> {
  const ranks = [...priorities].map(([id, priority]) => sql`WHEN ${sql.ref(libraryId)} = ${sql.lit(id)} THEN ${formatRankSql(file, priority)}`);
  const rank = ranks.length === 0 ? formatRankSql(file, null) : sql`CASE ${sql.join(ranks, sql` `)} ELSE ${formatRankSql(file, null)} END`;
  const missing = sql.ref(`${file}.missing_at`);
  return sql`CASE WHEN ${missing} IS NULL OR ${missing} = '' THEN 0 ELSE 1 END, ${rank}, ${sql.ref(`${file}.id`)}`;
}

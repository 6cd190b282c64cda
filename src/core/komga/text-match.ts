// How the Komga API compares text a client typed with text in the catalog: the `title` / `titleSort` conditions of a
// search, `fullTextSearch`, and the `search` query parameters. Every text comparison of src/core/komga goes through
// this module, in SQL (`textCondition`, `searchTextCondition`) or over names already in memory (`textMatches`), so
// the folding below is the one place to change how matching treats case, composed forms and accents.
import type { RawBuilder, SqlBool } from 'kysely';
import { sql } from 'kysely';
import { searchKey } from '../text/search-key.ts';
import type { SqlDialect } from '../store/dialect.ts';
import { nocase, positionSql } from './sql.ts';

export const TEXT_OPERATORS = ['is', 'isNot', 'contains', 'doesNotContain', 'beginsWith', 'doesNotBeginWith', 'endsWith', 'doesNotEndWith'] as const;
export type TextOperator = (typeof TEXT_OPERATORS)[number];

/** The folded form text in memory is compared in: the search key (no case, no accents, one composed form). */
export function foldText(text: string): string {
  return searchKey(text);
}

/**
 * The folding applied to a SQL text expression (NULL counts as empty). SQLite's lower() folds ASCII letters only, so
 * in SQL the needle is folded the same way.
 */
function foldedSql(expression: RawBuilder<unknown>): RawBuilder<string> {
  return sql<string>`lower(coalesce(${expression}, ''))`;
}

const NEGATED: Partial<Record<TextOperator, TextOperator>> = { isNot: 'is', doesNotContain: 'contains', doesNotBeginWith: 'beginsWith', doesNotEndWith: 'endsWith' };

/** A Komga string operator over a SQL text expression. */
export function textCondition(d: SqlDialect, expression: RawBuilder<unknown>, operator: TextOperator, value: string): RawBuilder<SqlBool> {
  const positive = NEGATED[operator];
  if (positive) return sql<SqlBool>`NOT (${textCondition(d, expression, positive, value)})`;
  const folded = foldedSql(expression);
  const needle = nocase(value);
  switch (operator) {
    case 'is':
      return sql<SqlBool>`(${folded} = ${needle})`;
    case 'contains':
      return sql<SqlBool>`(${positionSql(d, folded, needle)} > 0)`;
    case 'beginsWith':
      return sql<SqlBool>`(substr(${folded}, 1, ${needle.length}) = ${needle})`;
    default:
      // The last characters, spelled the same on both engines (a negative start means different things).
      return needle === '' ? sql<SqlBool>`1 = 1` : sql<SqlBool>`(length(${folded}) >= ${needle.length} AND substr(${folded}, length(${folded}) - ${needle.length - 1}) = ${needle})`;
  }
}

/** The same operator over text in memory (series names). */
export function textMatches(text: string, operator: TextOperator, value: string): boolean {
  const positive = NEGATED[operator];
  if (positive) return !textMatches(text, positive, value);
  const folded = foldText(text);
  const needle = foldText(value);
  if (operator === 'is') return folded === needle;
  if (operator === 'contains') return folded.includes(needle);
  if (operator === 'beginsWith') return folded.startsWith(needle);
  return folded.endsWith(needle);
}

/**
 * A free-text search over a book's title, authors and series (Bindery's `book_metadata.search_text`, stored as a
 * search key by every metadata writer).
 */
export function searchTextCondition(d: SqlDialect, query: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`${positionSql(d, sql.ref('m.search_text'), searchKey(query))} > 0`;
}

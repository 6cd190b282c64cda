// The dialect's SQL spellings (plain text, see dialect.ts) as Kysely fragments: a form wrapped around an expression or
// a bound value, so query builders can use them without placing parameters by hand.
import { sql, type Expression, type RawBuilder } from 'kysely';
import type { SqlDialect } from './dialect.ts';

/** A character no SQL text holds: where the form's argument goes. */
const HOLE = '\u0000';

/**
 * `form` (a dialect function of one SQL expression) around `argument`: an expression, or a value bound as a parameter.
 * `inForm((e) => dialect.nocase(e), 'Dune')` is `? COLLATE NOCASE` on SQLite and `lower($1)` on PostgreSQL.
 */
export function inForm<T>(form: (expression: string) => string, argument: Expression<unknown> | string | number): RawBuilder<T> {
  const [before = '', after = ''] = form(HOLE).split(HOLE);
  // The tag embeds an expression and binds anything else.
  return sql<T>`${sql.raw(before)}${argument}${sql.raw(after)}`;
}

/** `(SELECT value …)` over the ids, bound as one JSON parameter: one statement text whatever the number of ids. */
export const idsSubquery = (dialect: SqlDialect, ids: readonly number[]): RawBuilder<number> => inForm((p) => `(${dialect.jsonValues('integer', p)})`, JSON.stringify(ids));

/** A value as the dialect's `nocase` compares it, bound as a parameter. */
export const nocaseValue = (dialect: SqlDialect, value: string): RawBuilder<string> => inForm(dialect.nocase, value);

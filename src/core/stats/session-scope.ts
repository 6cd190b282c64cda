// What every statistic starts from: the caller's own reading sessions and progress rows, over the books the caller
// may still see (a book hidden since, by a library unassigned or a content restriction, no longer counts).
import type { AliasedSelectQueryBuilder, Expression, SelectQueryBuilder, SqlBool } from 'kysely';
import { sql } from 'kysely';
import { isAdmin, type Principal } from '../auth/principal.ts';
import { visibleBookFilter } from '../auth/visibility.ts';
import type { DB } from '../store/db-types.ts';
import { dialectOf } from '../store/dialect.ts';
import { idsSubquery } from '../store/dialect-forms.ts';
import type { Db } from '../store/store.ts';
import type { Period } from './calendar.ts';
import { offsetSpans, type OffsetSpan } from './zone-offsets.ts';

/** Reading statistics leave audiobook sessions out (a session without a type counts as reading); listening ones keep only them. */
export type SessionKind = 'reading' | 'listening' | 'any';

/**
 * `user_book_progress.book_id in (the visible books)`, or nothing to add for an admin. The unary plus keeps SQLite
 * from walking the visible books and looking each one's row up; it reads the caller's rows and probes the set.
 */
function visibleProgressCondition(db: Db, principal: Principal): Expression<SqlBool> | undefined {
  if (isAdmin(principal)) return undefined;
  const visible = db.selectFrom('book').select('book.id').where(visibleBookFilter(principal));
  return sql<SqlBool>`+user_book_progress.book_id in (${visible})`;
}

export interface SessionFilter {
  kind?: SessionKind;
  /** On start_time; either end may be open. */
  period?: Partial<Period>;
}

export type SessionQuery = SelectQueryBuilder<DB, 'reading_sessions', object>;

/**
 * Books the caller has sessions of but may no longer see: usually none, so the sessions need no visibility test at
 * all; a test per session against the set of visible books costs a 100,000-session history about 20 ms per query.
 */
export async function hiddenSessionBooks(db: Db, principal: Principal): Promise<number[]> {
  if (isAdmin(principal)) return [];
  const read = db.selectFrom('reading_sessions').select('reading_sessions.book_id').distinct().where('reading_sessions.user_id', '=', principal.userId);
  const visible = visibleBookFilter(principal);
  const rows = await db
    .selectFrom('book')
    .select('book.id')
    .where('book.id', 'in', read)
    .where((eb) => eb.not(visible(eb)))
    .execute();
  return rows.map((r) => r.id);
}

/** The caller's sessions of the books they may see, ready to be narrowed. */
export interface SessionScope {
  sessions(filter?: SessionFilter): SessionQuery;
}

export async function sessionScope(db: Db, principal: Principal): Promise<SessionScope> {
  const hidden = await hiddenSessionBooks(db, principal);
  return {
    sessions: (filter = {}) => {
      let query: SessionQuery = db.selectFrom('reading_sessions').where('reading_sessions.user_id', '=', principal.userId);
      if (filter.kind === 'reading') query = query.where(sql<SqlBool>`(reading_sessions.book_type is null or reading_sessions.book_type <> 'AUDIOBOOK')`);
      if (filter.kind === 'listening') query = query.where('reading_sessions.book_type', '=', 'AUDIOBOOK');
      if (filter.period?.start !== undefined) query = query.where('reading_sessions.start_time', '>=', filter.period.start);
      if (filter.period?.end !== undefined) query = query.where('reading_sessions.start_time', '<', filter.period.end);
      // One JSON parameter however many books: SQLite caps the number of parameters.
      return hidden.length === 0 ? query : query.where(sql<SqlBool>`reading_sessions.book_id not in ${idsSubquery(dialectOf(db), hidden)}`);
    },
  };
}

/** The caller's sessions of visible books, narrowed by kind and period. */
export async function callerSessions(db: Db, principal: Principal, filter: SessionFilter = {}): Promise<SessionQuery> {
  return (await sessionScope(db, principal)).sessions(filter);
}

/**
 * The caller's sessions of the kind summed per book, as the subquery `s` (`book_id`, `sessions`, `duration`): a
 * statistic per category or author joins this, so each session is read once however many names its book has.
 */
export async function sessionsPerBook(db: Db, principal: Principal, kind: SessionKind): Promise<AliasedSelectQueryBuilder<{ book_id: number; sessions: number; duration: number }, 's'>> {
  const sessions = await callerSessions(db, principal, { kind });
  return sessions
    .select((eb) => ['reading_sessions.book_id', eb.fn.countAll<number>().as('sessions'), eb.fn.sum<number>('reading_sessions.duration_seconds').as('duration')])
    .groupBy('reading_sessions.book_id')
    .as('s');
}

export type ProgressQuery = SelectQueryBuilder<DB, 'user_book_progress', object>;

/** The caller's progress rows of visible books. */
export function callerProgress(db: Db, principal: Principal): ProgressQuery {
  const query: ProgressQuery = db.selectFrom('user_book_progress').where('user_book_progress.user_id', '=', principal.userId);
  const visible = visibleProgressCondition(db, principal);
  return visible ? query.where(visible) : query;
}

/**
 * The zone's offsets over the period, or over the caller's whole session history when the period is open (two
 * index probes), so that a query over all time compares each row with only the offsets that history needs.
 */
export async function sessionOffsets(db: Db, userId: number, period?: Partial<Period>): Promise<OffsetSpan[]> {
  let from = period?.start;
  let to = period?.end;
  if (from === undefined || to === undefined) {
    const base = db.selectFrom('reading_sessions').where('user_id', '=', userId);
    from ??= (await base.select((eb) => eb.fn.min('start_time').as('t')).executeTakeFirst())?.t ?? undefined;
    to ??= (await base.select((eb) => eb.fn.max('start_time').as('t')).executeTakeFirst())?.t ?? undefined;
  }
  const fromMs = from === undefined ? Date.now() : Date.parse(from);
  const toMs = to === undefined ? fromMs : Date.parse(to);
  return offsetSpans(Number.isNaN(fromMs) ? Date.now() : fromMs, Number.isNaN(toMs) ? Date.now() : toMs);
}

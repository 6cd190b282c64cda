// Pages of a list ordered by one value and the id, read from where an earlier page of the same list ended instead of
// with OFFSET: each page walks only its own rows of the (value, id) index, so a deep page costs what the first does.
// Where the pages ended is kept per list until the catalog changes; a jump to a page nobody asked for starts from the
// nearest kept point (OFFSET from there), and the rows are exactly those ORDER BY … LIMIT/OFFSET gives.
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import { memosPerOwner, readerSource, type Generation } from './snapshot.ts';
import type { Store } from './store.ts';

/** Where a page ended: the row at `offset - 1` of the order, by its sort value and id. */
interface ResumePoint {
  value: unknown;
  id: number;
}

/** A row of a page: its id and the value it is ordered by. */
export interface ResumableRow {
  id: number;
  resume_value: unknown;
}

export interface ResumableOrder {
  descending: boolean;
  /** The value may be NULL: NULLs come first ascending and last descending (as SQLite sorts them by default). */
  nullable: boolean;
  /** The ordered value and the id, as SQL expressions. */
  value: RawBuilder<unknown>;
  id: RawBuilder<unknown>;
  /** The value is the id itself: no run of equal values to finish first. */
  valueIsId?: boolean;
}

/**
 * A range of the list after a point. Its SQL is told apart by `shape` alone (with the list and the order): `values` are
 * the condition's parameters, in order, so a reader can compile a statement once per shape and give it new values.
 */
export interface ListPart {
  condition: RawBuilder<SqlBool>;
  shape: string;
  values: readonly unknown[];
}

export interface ListReader {
  /** The rows of the list that also meet `part` (all of them without one), in the order, from `offset`. */
  rows(part: ListPart | undefined, limit: number, offset: number): Promise<ResumableRow[]>;
  /** How many rows of the list meet `part`. */
  count(part: ListPart): Promise<number>;
}

/** Per list (its query text and values, and the order) and catalog state: where the pages asked for so far ended. */
const resumePoints = memosPerOwner<string, Map<number, ResumePoint>>(64);
/** Points kept per list; a client pages on from the last ones. */
const POINTS_PER_LIST = 256;

function pointsOf(store: Store, list: string, snapshot: { snapshotGeneration?: Generation } | undefined): Map<number, ResumePoint> | undefined {
  // A write of this process still open may roll back: where its pages end is not kept.
  if (store.writeInFlight()) return undefined;
  const memo = resumePoints(store);
  return memo.get(readerSource(store, snapshot), list, () => new Map());
}

/** The point nearest before `offset`, with its offset. */
function nearestPoint(points: Map<number, ResumePoint> | undefined, offset: number): { at: number; point: ResumePoint } | undefined {
  let best: { at: number; point: ResumePoint } | undefined;
  for (const [at, point] of points ?? []) if (at <= offset && at > (best?.at ?? 0)) best = { at, point };
  return best;
}

/**
 * The rows after a point, as ranges of the index in the order: the rest of its run of equal values (by id), then the
 * later values, then (descending) the NULLs. Separate ranges rather than a row value `(value, id) < (?, ?)`: SQLite
 * uses only the row value's first column as the range, which after a bulk import (one date for every book) is the
 * whole catalog.
 */
function partsAfter(point: ResumePoint, order: ResumableOrder): ListPart[] {
  const { value, id } = order;
  const after = sql.raw(order.descending ? '<' : '>');
  if (point.value === null) {
    const rest: ListPart = { condition: sql<SqlBool>`${value} is null and ${id} ${after} ${point.id}`, shape: 'null, after id', values: [point.id] };
    return order.descending ? [rest] : [rest, { condition: sql<SqlBool>`${value} is not null`, shape: 'not null', values: [] }];
  }
  const later: ListPart = { condition: sql<SqlBool>`${value} ${after} ${point.value}`, shape: 'after value', values: [point.value] };
  if (order.valueIsId) return [later];
  const parts = [{ condition: sql<SqlBool>`${value} = ${point.value} and ${id} ${after} ${point.id}`, shape: 'value, after id', values: [point.value, point.id] }, later];
  if (order.nullable && order.descending) parts.push({ condition: sql<SqlBool>`${value} is null`, shape: 'null', values: [] });
  return parts;
}

/**
 * The ids of the page at `offset` of the list named `list` (any text that tells one list and order from another).
 * `snapshot`: the snapshot `reader` reads in, if it does (see ReadScope.snapshotGeneration).
 */
export async function resumedPage(store: Store, list: string, order: ResumableOrder, page: { offset: number; limit: number }, reader: ListReader, snapshot?: { snapshotGeneration?: Generation }): Promise<number[]> {
  const points = pointsOf(store, list, snapshot);
  const start = nearestPoint(points, page.offset);
  const rows: ResumableRow[] = [];
  let skip = page.offset - (start?.at ?? 0);
  for (const part of start ? partsAfter(start.point, order) : [undefined]) {
    const found = await reader.rows(part, page.limit - rows.length, skip);
    rows.push(...found);
    if (rows.length === page.limit || !part) break;
    // The part ended before the page did: the next one starts at its beginning, less what was still to skip.
    skip = found.length > 0 || skip === 0 ? 0 : Math.max(0, skip - (await reader.count(part)));
  }
  const last = rows.at(-1);
  if (points && last && rows.length === page.limit) {
    if (points.size >= POINTS_PER_LIST) points.delete(points.keys().next().value as number);
    points.set(page.offset + rows.length, { value: last.resume_value, id: last.id });
  }
  return rows.map((r) => r.id);
}

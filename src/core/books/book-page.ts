// One page of the visible books in a Spring Data order (`sort=metadata.title,asc`), as ids plus the total count.
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import { visibleBookFilter } from '../auth/visibility.ts';
import type { Store } from '../store/store.ts';
import { camel } from './book-json.ts';

export class SortError extends Error {
  override name = 'SortError';
}

export interface PageRequest {
  page: number;
  size: number;
  /** Spring `sort` values: `property` or `property,asc|desc`. */
  sort: string[];
}

export interface PageOfIds {
  ids: number[];
  totalElements: number;
}

const BOOK_PROPERTIES: Record<string, string> = {
  id: 'book.id',
  addedOn: 'book.added_on',
  scannedOn: 'book.scanned_on',
  metadataMatchScore: 'book.metadata_match_score',
  isPhysical: 'book.is_physical',
  libraryId: 'book.library_id',
};

let metadataProperties: Map<string, { column: string; text: boolean }> | undefined;

/** `metadata.<camelName>` → sortable book_metadata column (scalars, not lock flags). */
function metadataColumns(store: Store): Map<string, { column: string; text: boolean }> {
  if (!metadataProperties) {
    const columns = store.sqlite.prepare('PRAGMA table_info(book_metadata)').all() as { name: string; type: string }[];
    metadataProperties = new Map(
      columns
        .filter((c) => !c.name.endsWith('_locked') && !['book_id', 'search_text', 'identifiers_json', 'description'].includes(c.name))
        .map((c) => [`metadata.${camel(c.name)}`, { column: c.name, text: /TEXT/i.test(c.type) }]),
    );
  }
  return metadataProperties;
}

interface Order {
  expression: string;
  descending: boolean;
}

/** Parses Spring's sort parameters; an unknown property is an error (Spring would fail the request too). */
export function parseSort(store: Store, values: string[]): Order[] {
  const orders: Order[] = [];
  for (const value of values) {
    const parts = value.split(',').map((p) => p.trim()).filter(Boolean);
    if (parts.length === 0) continue;
    const last = parts.at(-1)?.toLowerCase();
    const direction = last === 'asc' || last === 'desc' ? last : undefined;
    const properties = direction ? parts.slice(0, -1) : parts;
    for (const property of properties) {
      const meta = metadataColumns(store).get(property);
      const expression = BOOK_PROPERTIES[property] ?? (meta ? `m.${meta.column}${meta.text ? ' COLLATE NOCASE' : ''}` : undefined);
      if (!expression) throw new SortError(`No property '${property}' found for type 'Book'`);
      orders.push({ expression, descending: direction === 'desc' });
    }
  }
  return orders;
}

export async function pageOfVisibleBooks(store: Store, principal: Principal, request: PageRequest): Promise<PageOfIds> {
  const orders = parseSort(store, request.sort);
  const visible = visibleBookFilter(principal);
  const counted = await store.db.selectFrom('book').select((eb) => eb.fn.countAll<number>().as('n')).where(visible).where('book.deleted', '=', 0).executeTakeFirstOrThrow();
  let query = store.db
    .selectFrom('book')
    .leftJoin('book_metadata as m', 'm.book_id', 'book.id')
    .select('book.id')
    .where(visible)
    .where('book.deleted', '=', 0);
  for (const order of orders) query = query.orderBy(sql.raw(order.expression), order.descending ? 'desc' : 'asc');
  const rows = await query.orderBy('book.id').limit(request.size).offset(request.page * request.size).execute();
  return { ids: rows.map((r) => r.id), totalElements: Number(counted.n) };
}

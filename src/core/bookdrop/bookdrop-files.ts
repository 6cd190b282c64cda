// Rows of the bookdrop queue: reading them as Grimmory's BookdropFile, paging, and turning a selection into ids.
import { springPage, type SpringPage } from '../spring-page.ts';
import type { Selectable } from 'kysely';
import { CodedError } from '../coded-error.ts';
import type { BookdropFileTable } from '../store/db-types.ts';
import type { Db } from '../store/store.ts';
import { parseStoredMetadata, type DropMetadata } from './bookdrop-metadata.ts';

export const PENDING = 'PENDING_REVIEW';
/** Imported (or being imported: the row is claimed with this status before its file is copied). */
export const FINALIZED = 'FINALIZED';

export type BookdropRow = Selectable<BookdropFileTable>;

export class BookdropError extends CodedError<'INVALID' | 'NOT_FOUND'> {}

/** Grimmory's BookdropFile DTO. */
export interface BookdropFileJson {
  id: number;
  fileName: string;
  filePath: string;
  fileSize: number | null;
  originalMetadata: DropMetadata | null;
  fetchedMetadata: DropMetadata | null;
  createdAt: string | null;
  updatedAt: string | null;
  status: string;
  /** Bindery's own: an imported file whose original could not be removed from the bookdrop, and why (only then). */
  originalLeft?: string;
}

export function bookdropFileJson(row: BookdropRow): BookdropFileJson {
  return {
    id: row.id,
    fileName: row.file_name,
    filePath: row.file_path,
    fileSize: row.file_size,
    originalMetadata: parseStoredMetadata(row.original_metadata),
    fetchedMetadata: parseStoredMetadata(row.fetched_metadata),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    status: row.status,
    ...(row.original_left !== null ? { originalLeft: row.original_left } : {}),
  };
}

/** The metadata a file is imported with when nobody gives any: fetched from providers when there is, else the file's. */
export function currentMetadata(row: BookdropRow): DropMetadata | null {
  return parseStoredMetadata(row.fetched_metadata) ?? parseStoredMetadata(row.original_metadata);
}

const SORTABLE: Record<string, keyof BookdropRow> = {
  id: 'id',
  fileName: 'file_name',
  filePath: 'file_path',
  fileSize: 'file_size',
  status: 'status',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
  originalMetadata: 'original_metadata',
  fetchedMetadata: 'fetched_metadata',
};

export interface PageRequest {
  page: number;
  size: number;
  /** Spring's `property[,asc|desc]`, repeatable. */
  sort?: string[];
}

export type Page<T> = SpringPage<T>;

function orderBy(sort: string[]): [keyof BookdropRow, 'asc' | 'desc'][] {
  const out: [keyof BookdropRow, 'asc' | 'desc'][] = [];
  for (const spec of sort) {
    const [property = '', direction = 'asc'] = spec.split(',').map((s) => s.trim());
    if (property === '') continue;
    const column = SORTABLE[property];
    if (!column) throw new BookdropError('INVALID', `No property '${property}' found for type 'BookdropFileEntity'`);
    out.push([column, direction.toLowerCase() === 'desc' ? 'desc' : 'asc']);
  }
  return out;
}

/** `status=pending` (any case) lists the files waiting for review; anything else lists every row. */
export async function listBookdropFiles(db: Db, status: string | undefined, request: PageRequest): Promise<Page<BookdropFileJson>> {
  const pendingOnly = status?.toLowerCase() === 'pending';
  let count = db.selectFrom('bookdrop_file').select((eb) => eb.fn.countAll<number>().as('n'));
  let rows = db.selectFrom('bookdrop_file').selectAll();
  if (pendingOnly) {
    count = count.where('status', '=', PENDING);
    rows = rows.where('status', '=', PENDING);
  }
  // Empty values sort first ascending and last descending, as SQLite sorts them, on either engine.
  for (const [column, direction] of orderBy(request.sort ?? [])) rows = rows.orderBy(column, (ob) => (direction === 'desc' ? ob.desc().nullsLast() : ob.asc().nullsFirst()));
  rows = rows.orderBy('id');
  const total = Number((await count.executeTakeFirstOrThrow()).n);
  const content = (await rows.limit(request.size).offset(request.page * request.size).execute()).map(bookdropFileJson);
  return springPage(content, request.page, request.size, total);
}

export async function pendingRows(db: Db, ids?: readonly number[]): Promise<BookdropRow[]> {
  let query = db.selectFrom('bookdrop_file').selectAll().where('status', '=', PENDING).orderBy('id');
  if (ids) query = query.where('id', 'in', ids.length > 0 ? [...ids] : [-1]);
  return query.execute();
}

export async function rowsByIds(db: Db, ids: readonly number[]): Promise<BookdropRow[]> {
  const out: BookdropRow[] = [];
  for (let i = 0; i < ids.length; i += 500) {
    out.push(...(await db.selectFrom('bookdrop_file').selectAll().where('id', 'in', ids.slice(i, i + 500)).execute()));
  }
  return out.sort((a, b) => a.id - b.id);
}

export interface Selection {
  selectAll?: boolean | null;
  excludedIds?: readonly number[] | null;
  selectedIds?: readonly number[] | null;
}

/** `selectAll` means every row but the excluded ones; otherwise exactly the selected ids (which may not exist). */
export async function selectedIds(db: Db, selection: Selection): Promise<number[]> {
  if (!selection.selectAll) return [...new Set(selection.selectedIds ?? [])];
  const excluded = new Set(selection.excludedIds ?? []);
  const rows = await db.selectFrom('bookdrop_file').select('id').orderBy('id').execute();
  return rows.map((r) => r.id).filter((id) => !excluded.has(id));
}

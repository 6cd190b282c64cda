// Reading and replacing the name lists of a book (authors in order; categories, moods, tags as sets).
import { nameIds, type NameTable } from '../books/names.ts';
import type { SqlExec } from '../store/sql-exec.ts';
import type { NameField } from './metadata-fields.ts';

export async function currentNames(exec: SqlExec, bookId: number, field: NameField): Promise<string[]> {
  const order = field.ordered ? 'm.sort_order' : 'n.name';
  const rows = await exec.all(`select n.name from ${field.mapping} m join ${field.table} n on n.id = m.${field.idColumn} where m.book_id = ? order by ${order}`, [bookId]);
  return rows.map((r) => r.name as string);
}

export async function replaceNames(exec: SqlExec, bookId: number, field: NameField, names: string[]): Promise<void> {
  await exec.run(`delete from ${field.mapping} where book_id = ?`, [bookId]);
  const ids = await nameIds(exec, field.table, names);
  for (let i = 0; i < ids.length; i++) {
    if (field.ordered) await exec.run(`insert into ${field.mapping} (book_id, ${field.idColumn}, sort_order) values (?, ?, ?) on conflict do nothing`, [bookId, ids[i] as number, i]);
    else await exec.run(`insert into ${field.mapping} (book_id, ${field.idColumn}) values (?, ?) on conflict do nothing`, [bookId, ids[i] as number]);
  }
}

export interface ComicNameList {
  table: NameTable;
  mapping: string;
  idColumn: string;
}

export async function currentComicNames(exec: SqlExec, bookId: number, list: ComicNameList): Promise<string[]> {
  const rows = await exec.all(`select n.name from ${list.mapping} m join ${list.table} n on n.id = m.${list.idColumn} where m.book_id = ? order by n.name`, [bookId]);
  return rows.map((r) => r.name as string);
}

export async function replaceComicNames(exec: SqlExec, bookId: number, list: ComicNameList, names: string[]): Promise<void> {
  await exec.run(`delete from ${list.mapping} where book_id = ?`, [bookId]);
  for (const id of await nameIds(exec, list.table, names)) await exec.run(`insert into ${list.mapping} (book_id, ${list.idColumn}) values (?, ?) on conflict do nothing`, [bookId, id]);
}

export async function currentCreators(exec: SqlExec, bookId: number, role: string): Promise<string[]> {
  const rows = await exec.all('select c.name from comic_metadata_creator_mapping m join comic_creator c on c.id = m.creator_id where m.book_id = ? and m.role = ? order by m.id', [bookId, role]);
  return rows.map((r) => r.name as string);
}

export async function replaceCreators(exec: SqlExec, bookId: number, role: string, names: string[]): Promise<void> {
  await exec.run('delete from comic_metadata_creator_mapping where book_id = ? and role = ?', [bookId, role]);
  for (const id of await nameIds(exec, 'comic_creator', names)) {
    await exec.run('insert into comic_metadata_creator_mapping (book_id, creator_id, role) values (?, ?, ?) on conflict do nothing', [bookId, id, role]);
  }
}

// Reading a calibre library's metadata.db, read-only: calibre's triggers call SQL functions only calibre defines
// (title_sort, …), and a read never fires them. One book at a time, through prepared statements.
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ImportError } from '../grimmory/source.ts';

export interface CalibreBook {
  id: number;
  title: string;
  sort: string | null;
  authorSort: string | null;
  /** The book's folder, relative to the library root. */
  path: string;
  hasCover: boolean;
  pubdate: string | null;
  seriesIndex: number | null;
  lastModified: string;
  timestamp: string | null;
  uuid: string | null;
}

export interface CalibreDetails {
  authors: string[];
  tags: string[];
  series: string | null;
  publisher: string | null;
  languages: string[];
  /** calibre's 0–10 (two per star; `calibredb set_metadata` takes stars). */
  rating: number | null;
  identifiers: Record<string, string>;
  comments: string | null;
  /** File names in the book folder, one per format. */
  files: string[];
}

export interface CustomColumn {
  id: number;
  label: string;
  name: string;
  datatype: string;
  isMultiple: boolean;
  normalized: boolean;
}

export type CustomValue = string | number | boolean | string[] | null;

export class CalibreLibrary {
  readonly root: string;
  private readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();

  constructor(root: string) {
    this.root = root;
    const file = join(root, 'metadata.db');
    if (!existsSync(file)) throw new ImportError('PATH_NOT_FOUND', `${root} is not a calibre library: it has no metadata.db`);
    try {
      this.db = new Database(file, { readonly: true, fileMustExist: true });
      this.db.pragma('query_only = true');
      this.db.prepare('select count(*) from books').get();
    } catch (error) {
      throw new ImportError('SOURCE_INVALID', `cannot read ${file}: ${(error as Error).message}`);
    }
  }

  private all<T>(sql: string, ...params: unknown[]): T[] {
    let s = this.statements.get(sql);
    if (!s) this.statements.set(sql, (s = this.db.prepare(sql)));
    return s.all(...params) as T[];
  }

  /** Every book, oldest first; `last_modified` decides on a later run whether it changed. */
  *books(): Iterable<CalibreBook> {
    const rows = this.db
      .prepare('select id, title, sort, author_sort, path, has_cover, pubdate, series_index, last_modified, timestamp, uuid from books order by id')
      .iterate() as Iterable<{ id: number; title: string; sort: string | null; author_sort: string | null; path: string; has_cover: number; pubdate: string | null; series_index: number | null; last_modified: string; timestamp: string | null; uuid: string | null }>;
    for (const r of rows) {
      yield { id: r.id, title: r.title, sort: r.sort, authorSort: r.author_sort, path: r.path, hasCover: r.has_cover === 1, pubdate: r.pubdate, seriesIndex: r.series_index, lastModified: r.last_modified, timestamp: r.timestamp, uuid: r.uuid };
    }
  }

  bookCount(): number {
    return (this.db.prepare('select count(*) as n from books').get() as { n: number }).n;
  }

  details(bookId: number): CalibreDetails {
    const names = (sql: string): string[] => this.all<{ name: string }>(sql, bookId).map((r) => r.name);
    const identifiers: Record<string, string> = {};
    for (const r of this.all<{ type: string; val: string }>('select type, val from identifiers where book = ? order by id', bookId)) identifiers[r.type.toLowerCase()] = r.val;
    const rating = this.all<{ rating: number | null }>('select r.rating from books_ratings_link l join ratings r on r.id = l.rating where l.book = ?', bookId)[0]?.rating ?? null;
    return {
      authors: names('select a.name from books_authors_link l join authors a on a.id = l.author where l.book = ? order by l.id'),
      tags: names('select t.name from books_tags_link l join tags t on t.id = l.tag where l.book = ? order by t.name'),
      series: names('select s.name from books_series_link l join series s on s.id = l.series where l.book = ?')[0] ?? null,
      publisher: names('select p.name from books_publishers_link l join publishers p on p.id = l.publisher where l.book = ?')[0] ?? null,
      languages: this.all<{ code: string }>('select g.lang_code as code from books_languages_link l join languages g on g.id = l.lang_code where l.book = ? order by l.item_order', bookId).map((r) => r.code),
      rating: rating && rating > 0 ? rating : null,
      identifiers,
      comments: this.all<{ text: string | null }>('select text from comments where book = ?', bookId)[0]?.text ?? null,
      files: this.all<{ name: string; format: string }>('select name, format from data where book = ? order by id', bookId).map((r) => `${r.name}.${r.format.toLowerCase()}`),
    };
  }

  customColumns(): CustomColumn[] {
    return this.all<{ id: number; label: string; name: string; datatype: string; is_multiple: number; normalized: number; mark_for_delete: number }>('select id, label, name, datatype, is_multiple, normalized, mark_for_delete from custom_columns order by label')
      .filter((c) => !c.mark_for_delete)
      .map((c) => ({ id: c.id, label: c.label, name: c.name, datatype: c.datatype, isMultiple: c.is_multiple === 1, normalized: c.normalized === 1 }));
  }

  customValue(column: CustomColumn, bookId: number): CustomValue {
    const values = column.normalized
      ? this.all<{ value: unknown }>(`select v.value as value from books_custom_column_${column.id}_link l join custom_column_${column.id} v on v.id = l.value where l.book = ? order by v.value`, bookId)
      : this.all<{ value: unknown }>(`select value from custom_column_${column.id} where book = ?`, bookId);
    if (column.isMultiple) return values.map((v) => String(v.value));
    const value = values[0]?.value;
    if (value === undefined || value === null) return null;
    if (column.datatype === 'bool') return value === 1 || value === true;
    return typeof value === 'number' ? value : String(value);
  }

  /** How many books have a value in the column. */
  customCount(column: CustomColumn): number {
    const table = column.normalized ? `books_custom_column_${column.id}_link` : `custom_column_${column.id}`;
    return (this.db.prepare(`select count(distinct book) as n from ${table}`).get() as { n: number }).n;
  }

  close(): void {
    this.db.close();
  }
}

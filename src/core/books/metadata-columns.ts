// The columns of book_metadata, read from the catalog once per process and engine: Book JSON and the sortable
// `metadata.*` properties follow the table instead of a list kept by hand.
import type { Kysely } from 'kysely';
import type { DB } from '../store/db-types.ts';
import { engineOf, type Engine } from '../store/engine.ts';

export interface MetadataColumn {
  name: string;
  /** Holds text (sorted without regard to ASCII case). */
  text: boolean;
}

const known = new Map<Engine, Promise<MetadataColumn[]>>();

async function introspect(db: Kysely<DB>): Promise<MetadataColumn[]> {
  const tables = await db.introspection.getTables();
  const table = tables.find((t) => t.name === 'book_metadata');
  if (!table) throw new Error('the catalog has no book_metadata table');
  return table.columns.map((c) => ({ name: c.name, text: /text|char/i.test(c.dataType) }));
}

/** `db` may be a transaction: the columns are the same in every catalog this version migrates. */
export function metadataTableColumns(db: Kysely<DB>): Promise<MetadataColumn[]> {
  const engine = engineOf(db);
  let columns = known.get(engine);
  if (!columns) {
    columns = introspect(db);
    known.set(engine, columns);
    columns.catch(() => known.delete(engine));
  }
  return columns;
}

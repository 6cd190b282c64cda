// Reading a Grimmory database from a mysqldump file. One pass indexes the file: each table's columns (from CREATE
// TABLE) and the byte ranges of its INSERT lines (mysqldump writes one statement per line and escapes newlines inside
// strings). Reading a table then streams only its ranges through the INSERT parser: memory stays bounded whatever the
// dump's size, and each stage reads just the tables it needs. A statement may span lines (mariadb-dump puts each
// row on its own line); a line ending in `;` ends it.
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { InsertParser } from './insert-parser.ts';
import { ImportError, type GrimmorySource, type SourceRow, type SourceSchema } from './source.ts';

interface DumpIndex {
  schema: SourceSchema;
  /** Inclusive byte ranges of each table's INSERT lines. */
  ranges: Map<string, [number, number][]>;
}

const INSERT_PREFIX = /^INSERT\s+(?:IGNORE\s+)?INTO\s+`([^`]+)`/i;
const CREATE_PREFIX = /^CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?`([^`]+)`/i;
const COLUMN_LINE = /^\s*`([^`]+)`\s+([a-z]+)/i;
const PREFIX_BYTES = 256;

/** One pass over the file: CREATE TABLE column lists and where each table's INSERT lines are. */
export async function indexDump(path: string): Promise<DumpIndex> {
  const schema: SourceSchema = new Map();
  const ranges = new Map<string, [number, number][]>();
  let offset = 0;
  let lineStart = 0;
  let prefix = '';
  let prefixDone = false;
  let creating: Map<string, string> | undefined;
  /** The table whose INSERT statement continues on the next line (mariadb-dump writes one row per line). */
  let inserting: string | undefined;
  let lastByte = 0;

  const addRange = (table: string, lineEnd: number): void => {
    let list = ranges.get(table);
    if (!list) ranges.set(table, (list = []));
    const last = list.at(-1);
    if (last && last[1] + 1 === lineStart) last[1] = lineEnd;
    else list.push([lineStart, lineEnd]);
  };

  const endLine = (lineEnd: number): void => {
    const endsStatement = lastByte === 0x3b;
    if (inserting) {
      addRange(inserting, lineEnd);
      if (endsStatement) inserting = undefined;
    } else if (creating) {
      const column = COLUMN_LINE.exec(prefix);
      if (column) creating.set(column[1] as string, (column[2] as string).toLowerCase());
      else if (/^\)/.test(prefix)) creating = undefined;
    } else {
      const insert = INSERT_PREFIX.exec(prefix);
      if (insert) {
        addRange(insert[1] as string, lineEnd);
        if (!endsStatement) inserting = insert[1] as string;
      } else {
        const create = CREATE_PREFIX.exec(prefix);
        if (create) {
          creating = new Map();
          schema.set(create[1] as string, creating);
        }
      }
    }
    prefix = '';
    prefixDone = false;
  };

  const stream = createReadStream(path, { highWaterMark: 1 << 20 });
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let from = 0;
      while (from < chunk.length) {
        const newline = chunk.indexOf(0x0a, from);
        const to = newline === -1 ? chunk.length : newline;
        if (!prefixDone) {
          prefix += chunk.subarray(from, Math.min(to, from + PREFIX_BYTES)).toString('utf8');
          if (prefix.length >= PREFIX_BYTES) prefixDone = true;
        }
        if (to > from) lastByte = chunk[to - 1] as number;
        if (newline === -1) break;
        endLine(offset + newline);
        lastByte = 0;
        lineStart = offset + newline + 1;
        from = newline + 1;
      }
      offset += chunk.length;
    }
  } catch (error) {
    throw new ImportError('SOURCE_INVALID', `cannot read the dump ${path}: ${(error as Error).message}`);
  }
  if (prefix) endLine(offset - 1);
  return { schema, ranges };
}

export async function openDumpSource(path: string): Promise<GrimmorySource> {
  try {
    if (!(await stat(path)).isFile()) throw new Error('not a file');
  } catch {
    throw new ImportError('PATH_NOT_FOUND', `no dump file at ${path}`);
  }
  // Reading a table seeks to its part of the file, which a compressed stream cannot do.
  const head = Buffer.alloc(2);
  const handle = await open(path, 'r');
  await handle.read(head, 0, 2, 0).finally(() => handle.close());
  if (head[0] === 0x1f && head[1] === 0x8b) throw new ImportError('SOURCE_INVALID', `${path} is gzip-compressed: decompress it first (gunzip -k ${basename(path)})`);
  let index: Promise<DumpIndex> | undefined;
  const indexed = (): Promise<DumpIndex> => (index ??= indexDump(path));
  const source: GrimmorySource = {
    label: basename(path),
    schema: async () => {
      const { schema } = await indexed();
      if (schema.size === 0) throw new ImportError('SOURCE_INVALID', `${path} holds no CREATE TABLE statement: is it a mysqldump file?`);
      return schema;
    },
    async *rows(table: string): AsyncIterable<SourceRow> {
      const { schema, ranges } = await indexed();
      const columns = [...(schema.get(table)?.keys() ?? [])];
      for (const [start, end] of ranges.get(table) ?? []) {
        const parser = new InsertParser();
        for await (const chunk of createReadStream(path, { start, end, encoding: 'utf8', highWaterMark: 1 << 18 }) as AsyncIterable<string>) {
          for (const parsed of parser.push(chunk)) {
            const names = parsed.columns ?? columns;
            const row: SourceRow = {};
            for (let i = 0; i < names.length; i++) row[names[i] as string] = parsed.values[i] ?? null;
            yield row;
          }
        }
      }
    },
    async count(table: string): Promise<number> {
      let rows = 0;
      for await (const _row of source.rows(table)) rows++;
      return rows;
    },
    close: async () => undefined,
  };
  return source;
}

// The Grimmory importer's pure parts: the dump's INSERT parser, the schema version check, path remapping, and that
// every table of Grimmory's schema is either imported or named as left behind.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { InsertParser, type ParsedRow } from '../../../src/core/import/grimmory/insert-parser.ts';
import { NOT_IMPORTED, STAGE_TABLES } from '../../../src/core/import/grimmory/grimmory-tables.ts';
import { instantFromSql, schemaVersionOf } from '../../../src/core/import/grimmory/source.ts';
import { parsePathMapping, remapPath } from '../../../src/core/import/path-map.ts';
import { SCHEMA_SQL } from '../../helpers/grimmory-seed.ts';

function parseInChunks(text: string, size: number): ParsedRow[] {
  const parser = new InsertParser();
  const rows: ParsedRow[] = [];
  for (let i = 0; i < text.length; i += size) rows.push(...parser.push(text.slice(i, i + size)));
  return rows;
}

describe('the INSERT parser', () => {
  const dump = [
    "INSERT INTO `annotations` VALUES (1,2,'it\\'s \\\"quoted\\\"\\nnext line','back\\\\slash',NULL,-3.5e2,0x414243,_binary 'raw'),",
    "(2,3,'semi;colon, comma) paren','',1,0,'50\\% off','doubled '' quote');",
    'INSERT INTO `tag` (`id`,`name`) VALUES (7,\'fantasy\');',
  ].join('\n');
  const expected: ParsedRow[] = [
    { table: 'annotations', columns: null, values: [1, 2, 'it\'s "quoted"\nnext line', 'back\\slash', null, -350, 'ABC', 'raw'] },
    { table: 'annotations', columns: null, values: [2, 3, 'semi;colon, comma) paren', '', 1, 0, '50\\% off', "doubled ' quote"] },
    { table: 'tag', columns: ['id', 'name'], values: [7, 'fantasy'] },
  ];

  it('reads values, escapes and column lists whatever the chunk boundaries', () => {
    for (const size of [1, 2, 3, 7, 64, dump.length]) expect(parseInChunks(dump, size), `chunks of ${size}`).toEqual(expected);
  });
});

describe('the schema check', () => {
  it('takes the highest successful Flyway version, numerically', () => {
    expect(schemaVersionOf([{ version: '99', success: 1 }, { version: '144', success: 1 }, { version: '145', success: 0 }, { version: null, success: 1 }])).toBe('144');
    expect(schemaVersionOf([{ version: '2.10', success: 1 }, { version: '2.9', success: 1 }])).toBe('2.10');
  });

  it('turns MariaDB times into ISO-8601 UTC and keeps dates', () => {
    expect(instantFromSql('2024-05-01 10:00:00', 'timestamp')).toBe('2024-05-01T10:00:00.000Z');
    expect(instantFromSql('2024-05-01 10:00:00.123456', 'datetime')).toBe('2024-05-01T10:00:00.123Z');
    expect(instantFromSql('1969-03-01', 'date')).toBe('1969-03-01');
    expect(instantFromSql('0000-00-00 00:00:00', 'datetime')).toBeNull();
  });
});

describe('--map OLD=NEW', () => {
  const maps = ['/books=/srv/books', '/books/comics=/mnt/comics'].map(parsePathMapping);
  it('replaces the longest matching folder prefix, whole names only', () => {
    expect(remapPath('/books/a/b.epub', maps)).toBe('/srv/books/a/b.epub');
    expect(remapPath('/books/comics/x.cbz', maps)).toBe('/mnt/comics/x.cbz');
    expect(remapPath('/books', maps)).toBe('/srv/books');
    expect(remapPath('/bookshelf/x', maps)).toBe('/bookshelf/x');
  });
  it('refuses a mapping without both sides', () => {
    expect(() => parsePathMapping('/books')).toThrow(/OLD=NEW/);
  });
});

it('every table of Grimmory’s schema is imported or named as left behind, once', () => {
  const tables = [...readFileSync(SCHEMA_SQL, 'utf8').matchAll(/CREATE TABLE `([^`]+)`/g)].map((m) => m[1] as string);
  expect(tables).toHaveLength(73);
  const imported = STAGE_TABLES.flatMap((s) => s.tables.map((t) => t.table));
  const listed = [...imported, ...Object.keys(NOT_IMPORTED)].sort();
  expect(listed).toEqual([...tables].sort());
  expect(new Set(listed).size).toBe(listed.length);
});

// The Store's engine-neutral surface, run on whichever engine this run of the suite uses: raw SQL with `?`
// placeholders, read snapshots, write transactions, change generations, and the dialect's spellings giving the same
// answers on SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { numberedPlaceholders } from '../../src/core/store/sql-exec.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';

let tmp: TempDir;
let store: Store;

beforeAll(async () => {
  tmp = makeTempDir('bindery-scopes-');
  store = await openStore(tmp.file('bindery.sqlite'));
  for (const name of ['beta', 'Alpha', 'gamma', 'alpha two', 'Épée', 'zeta']) await store.exec.run('INSERT INTO library (name) VALUES (?)', [name]);
});
afterAll(async () => {
  await store.close();
  tmp.remove();
});

const names = async (sql: string, params: unknown[] = []): Promise<string[]> => (await store.exec.all(sql, params as never[])).map((r) => r.name as string);

describe('raw SQL', () => {
  it('numbers placeholders for PostgreSQL but leaves question marks in quotes alone', () => {
    expect(numberedPlaceholders(`SELECT ? , '?', "a?b", ? FROM t WHERE x = ?`)).toBe(`SELECT $1 , '?', "a?b", $2 FROM t WHERE x = $3`);
  });

  it('returns 64-bit integers and aggregates as numbers', async () => {
    const row = await store.exec.get('SELECT count(*) AS n, sum(id) AS s, max(id) AS m, avg(id) AS a FROM library');
    expect(row).toEqual({ n: 6, s: 21, m: 6, a: 3.5 });
    await store.exec.run('UPDATE library SET last_scanned_at = ? WHERE id = ?', ['2026-01-01T00:00:00.000Z', 1]);
    const big = await store.exec.get('SELECT CAST(? AS bigint) AS v', [1_700_000_000_123]);
    expect(big?.v).toBe(1_700_000_000_123);
  });
});

describe('dialect', () => {
  it('sorts and compares without ASCII case, bytewise otherwise, as SQLite NOCASE does', async () => {
    const d = store.dialect;
    expect(await names(`SELECT name FROM library ORDER BY ${d.nocase('name')}, id`)).toEqual(['Alpha', 'alpha two', 'beta', 'gamma', 'zeta', 'Épée']);
    expect(await names(`SELECT name FROM library WHERE ${d.nocase('name')} = ${d.nocase('?')}`, ['ALPHA'])).toEqual(['Alpha']);
    expect(await names(`SELECT name FROM library WHERE ${d.likeNocase('name', '?')} ORDER BY id`, ['AL%'])).toEqual(['Alpha', 'alpha two']);
    expect(await names(`SELECT name FROM library WHERE ${d.likeNocase('name', '?')} ORDER BY id`, ['alpha\\_two'])).toEqual([]);
  });

  it('reads JSON arrays of ids and texts, joins and aggregates groups', async () => {
    const d = store.dialect;
    expect(await names(`SELECT name FROM library WHERE id IN (${d.jsonValues('integer')}) ORDER BY id`, [JSON.stringify([2, 4])])).toEqual(['Alpha', 'alpha two']);
    expect(await names(`SELECT name FROM library WHERE name IN (${d.jsonValues('text')}) ORDER BY id`, [JSON.stringify(['zeta', 'beta'])])).toEqual(['beta', 'zeta']);
    const joined = await store.exec.get(`SELECT ${d.groupConcat('name', `'|'`)} AS j FROM (SELECT name FROM library WHERE id <= 3 ORDER BY id) x`);
    expect((joined?.j as string).split('|').sort()).toEqual(['Alpha', 'beta', 'gamma']);
    const array = await store.exec.get(`SELECT ${d.jsonGroupArray('id')} AS a FROM library WHERE id <= 2`);
    expect((JSON.parse(array?.a as string) as number[]).sort()).toEqual([1, 2]);
    const empty = await store.exec.get(`SELECT ${d.jsonGroupArray('id')} AS a FROM library WHERE id < 0`);
    expect(JSON.parse(empty?.a as string)).toEqual([]);
  });

  it('spells two-value max/min, rounding, positions and the time now alike', async () => {
    const d = store.dialect;
    const row = await store.exec.get(
      `SELECT ${d.greatest('3', '7')} AS g, ${d.least('3', '7')} AS l, ${d.round('2.34567', 2)} AS r, ${d.position("'bindery'", "'de'")} AS p, ${d.position("'bindery'", "'x'")} AS p0, ${d.now} AS now`,
    );
    expect(row).toMatchObject({ g: 7, l: 3, r: 2.35, p: 4, p0: 0 });
    expect(row?.now).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('fills a timestamp default in the catalog format', async () => {
    const row = await store.exec.get('SELECT created_at FROM library WHERE id = 1');
    expect(row?.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });
});

describe('scopes', () => {
  it('commits a write scope whole, and rolls it back whole when it throws', async () => {
    await store.write(async ({ exec }) => {
      await exec.run('INSERT INTO library (name) VALUES (?)', ['committed']);
    });
    await expect(
      store.write(async ({ db, exec }) => {
        await exec.run('INSERT INTO library (name) VALUES (?)', ['rolled back']);
        await db.insertInto('library').values({ name: 'rolled back too' }).execute();
        throw new Error('stop');
      }),
    ).rejects.toThrow('stop');
    expect(await names(`SELECT name FROM library WHERE name LIKE 'rolled%' OR name = 'committed'`)).toEqual(['committed']);
  });

  it('lets a write wait for a read snapshot that is awaiting, and the snapshot sees one state', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const reading = store.read(async ({ exec }) => {
      const before = (await exec.get('SELECT count(*) AS n FROM library'))?.n;
      await gate;
      const after = (await exec.get('SELECT count(*) AS n FROM library'))?.n;
      return { before, after };
    });
    const writing = store.write(async ({ exec }) => exec.run('INSERT INTO library (name) VALUES (?)', ['during a read']));
    await new Promise((r) => setTimeout(r, 50));
    release();
    const [seen] = await Promise.all([reading, writing]);
    expect(seen.after).toBe(seen.before);
    expect(await names(`SELECT name FROM library WHERE name = 'during a read'`)).toEqual(['during a read']);
  });

  it('moves the generation when this process commits, and keeps it while nothing changes', async () => {
    const before = store.generation();
    expect(store.generation()).toEqual(before);
    await store.exec.run('UPDATE library SET sort = ? WHERE id = 1', ['x']);
    expect(store.generation()).not.toEqual(before);
    expect(store.writeInFlight()).toBe(false);
  });

  it('moves the generation when another connection commits', async () => {
    const other = await openStore(tmp.file('bindery.sqlite'));
    try {
      const before = store.generation();
      await other.exec.run('UPDATE library SET sort = ? WHERE id = 2', ['y']);
      await expect.poll(() => JSON.stringify(store.generation()), { timeout: 5000 }).not.toBe(JSON.stringify(before));
    } finally {
      await other.close();
    }
  });
});

// Reading the events outbox in commit order: every committed event is delivered exactly once, also when transactions
// commit out of id order (PostgreSQL) or an insert was rolled back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendEvent } from '../../src/core/events/outbox.ts';
import { OutboxCursor, HOLE_WAIT_MS } from '../../src/core/events/outbox-cursor.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { onPostgres } from '../helpers/engine.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';

let dir: TempDir;
let store: Store;

beforeAll(async () => {
  dir = makeTempDir('bindery-outbox-');
  store = await openStore(dir.file('bindery.sqlite'));
});

afterAll(async () => {
  await store?.close();
  dir?.remove();
});

const log = (message: string) => ({ kind: 'log', audience: 'managers', message, severity: 'INFO' }) as const;
const messages = (rows: { payload: string }[]): string[] => rows.map((r) => (JSON.parse(r.payload) as { message: string }).message);

async function next(cursor: OutboxCursor): Promise<string[]> {
  return messages((await store.read(({ exec }) => cursor.next(exec, 50))).rows);
}

describe('the outbox cursor', () => {
  it('starts after the newest event and delivers each later one once', async () => {
    await appendEvent(store.db, log('before'));
    const cursor = new OutboxCursor();
    await store.read(({ exec }) => cursor.start(exec));
    expect(await next(cursor)).toEqual([]);
    await appendEvent(store.db, log('one'));
    await appendEvent(store.db, log('two'));
    expect(await next(cursor)).toEqual(['one', 'two']);
    expect(await next(cursor)).toEqual([]);
  });

  it('delivers once an event whose insert rolled back is skipped, and gives the gap up after a while', async () => {
    let now = Date.now();
    const cursor = new OutboxCursor(() => now);
    await store.read(({ exec }) => cursor.start(exec));
    await store
      .write(async ({ db }) => {
        await appendEvent(db, log('rolled back'));
        throw new Error('roll back');
      })
      .catch(() => undefined);
    await appendEvent(store.db, log('after'));
    expect(await next(cursor)).toEqual(['after']);
    now += HOLE_WAIT_MS + 1;
    expect(await next(cursor)).toEqual([]);
    await appendEvent(store.db, log('later'));
    expect(await next(cursor)).toEqual(['later']);
  });

  // Only PostgreSQL commits transactions out of id order; SQLite hands ids out inside its single write lock.
  it.skipIf(!onPostgres)('delivers an event committed after a later id was read', async () => {
    const cursor = new OutboxCursor();
    await store.read(({ exec }) => cursor.start(exec));
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let inserted!: () => void;
    const insertedYet = new Promise<void>((r) => (inserted = r));
    const slow = store.write(async ({ db }) => {
      await appendEvent(db, log('slow'));
      inserted();
      await held;
    });
    await insertedYet;
    await appendEvent(store.db, log('fast'));
    expect(await next(cursor)).toEqual(['fast']);
    release();
    await slow;
    expect(await next(cursor)).toEqual(['slow']);
    expect(await next(cursor)).toEqual([]);
  });
});

// Komga sessions: a token signs its account in until it expires (14 days from last use, extended when half spent),
// the password changes, the account goes or the client signs out; an account keeps its 20 newest sessions.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endSession, sessionAccount, startSession } from '../../src/core/komga/sessions.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';

let dir: string;
let store: Store;
let account: number;
const DAY = 24 * 3600 * 1000;
const t0 = Date.parse('2026-01-01T00:00:00Z');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bindery-komga-sessions-'));
  store = await openStore(join(dir, 'catalog.sqlite'));
  const owner = (await store.db.insertInto('users').values({ username: 'owner', password_hash: 'x', name: 'Owner' }).returning('id').executeTakeFirstOrThrow()).id;
  account = (await store.db.insertInto('opds_user_v2').values({ user_id: owner, username: 'app', password_hash: '$2a$10$first' }).returning('id').executeTakeFirstOrThrow()).id;
});

afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('Komga sessions', () => {
  it('sign the account in until they expire, extended by use', async () => {
    const token = (await startSession(store, account, t0)) as string;
    expect(await sessionAccount(store, token, t0 + DAY)).toMatchObject({ opdsUserId: account, username: 'app' });
    expect(await sessionAccount(store, 'not-a-token', t0)).toBeUndefined();
    // Used on day 10 (past half its life): it now lasts until day 24.
    expect(await sessionAccount(store, token, t0 + 10 * DAY)).toBeDefined();
    expect(await sessionAccount(store, token, t0 + 20 * DAY)).toBeDefined();
    expect(await sessionAccount(store, token, t0 + 40 * DAY)).toBeUndefined();
    expect(await startSession(store, 99_999, t0)).toBeUndefined();
  });

  it('end with a new password, a sign-out, or the account', async () => {
    const first = (await startSession(store, account, t0)) as string;
    const second = (await startSession(store, account, t0)) as string;
    await endSession(store, first);
    expect(await sessionAccount(store, first, t0)).toBeUndefined();
    expect(await sessionAccount(store, second, t0)).toBeDefined();
    await store.db.updateTable('opds_user_v2').set({ password_hash: '$2a$10$second' }).where('id', '=', account).execute();
    expect(await sessionAccount(store, second, t0)).toBeUndefined();
    const third = (await startSession(store, account, t0)) as string;
    for (let i = 0; i < 25; i++) await startSession(store, account, t0 + (i + 1) * 1000);
    expect(await sessionAccount(store, third, t0 + 60_000)).toBeUndefined();
    expect(await store.db.selectFrom('komga_session').select(({ fn }) => fn.countAll().as('n')).where('opds_user_id', '=', account).executeTakeFirst()).toEqual({ n: 20 });
    await store.db.deleteFrom('opds_user_v2').where('id', '=', account).execute();
    expect(await store.db.selectFrom('komga_session').selectAll().execute()).toEqual([]);
  });
});

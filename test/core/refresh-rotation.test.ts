// Refresh-token rotation when the same token arrives twice at once, at two replicas (two Stores of one catalog, each
// with its own connections): exactly one gets a new pair, and exactly one new token is stored.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignInPolicy } from '../../src/core/auth/login-rate-limit.ts';
import { issueTokens, refreshSession } from '../../src/core/auth/refresh-tokens.ts';
import { signingSecret } from '../../src/core/auth/tokens.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';

let dir: string;
let replicas: Store[];
let userId: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bindery-rotation-'));
  const catalog = join(dir, 'catalog.sqlite');
  const first = await openStore(catalog);
  replicas = [first, await openStore(catalog)];
  userId = (await first.db.insertInto('users').values({ username: 'reader', password_hash: 'x', name: 'Reader' }).returning('id').executeTakeFirstOrThrow()).id;
});

afterAll(async () => {
  for (const store of replicas ?? []) await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('refresh-token rotation', () => {
  it('rotates a token used at two replicas at once exactly once, every time', async () => {
    const [a, b] = replicas as [Store, Store];
    const secret = await signingSecret(a.db);
    for (let round = 0; round < 20; round++) {
      const { refreshToken } = await issueTokens(a.db, secret, userId);
      const attempts = await Promise.allSettled(
        [a, b, a, b].map((store, i) => refreshSession(store.db, secret, new SignInPolicy(), `10.0.0.${i}`, refreshToken)),
      );
      const won = attempts.filter((r) => r.status === 'fulfilled');
      expect(won, `round ${round}`).toHaveLength(1);
      for (const lost of attempts.filter((r) => r.status === 'rejected')) expect(String(lost.reason)).toMatch(/credential|invalid/i);
      const newToken = (won[0] as PromiseFulfilledResult<{ refreshToken: string }>).value.refreshToken;
      const live = await b.db.selectFrom('refresh_token').select('token').where('user_id', '=', userId).where('revoked', '=', 0).execute();
      expect(live.map((r) => r.token)).toEqual([newToken]);
      // The old token stays spent.
      await expect(refreshSession(b.db, secret, new SignInPolicy(), '10.0.1.1', refreshToken)).rejects.toThrow();
      await a.db.updateTable('refresh_token').set({ revoked: 1 }).where('user_id', '=', userId).execute();
    }
  }, 60_000);
});

// Sign-in state shared by replicas (processes of their own on one catalog): they agree on the signing secret even when
// they create it together, and a refresh token used at two of them at once rotates once.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { issueTokens } from '../../src/core/auth/refresh-tokens.ts';
import { signingSecret } from '../../src/core/auth/tokens.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';

const run = promisify(execFile);
const replica = join(import.meta.dirname, '..', 'helpers', 'auth-replica.ts');
const replicaSays = async (...args: string[]): Promise<string[]> => (await run(process.execPath, [replica, ...args])).stdout.trim().split('\n');

let dir: string;
let catalog: string;
let store: Store;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bindery-auth-replicas-'));
  catalog = join(dir, 'catalog.sqlite');
  store = await openStore(catalog);
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('replicas signing in', () => {
  it('agree on the signing secret when they create it at the same moment on a new catalog', async () => {
    expect(await store.db.selectFrom('jwt_secret').select('id').execute()).toEqual([]);
    const answers = await Promise.all([1, 2, 3, 4].map(() => replicaSays('secret', catalog)));
    const secrets = new Set(answers.flat());
    expect(secrets.size).toBe(1);
    expect(await store.db.selectFrom('jwt_secret').select('id').execute()).toHaveLength(1);
    expect(Buffer.from(await signingSecret(store.db)).toString('base64')).toBe([...secrets][0]);
  }, 60_000);

  it('rotate a refresh token used at two of them at once exactly once, every time', async () => {
    const userId = (await store.db.insertInto('users').values({ username: 'reader', password_hash: 'x', name: 'Reader' }).returning('id').executeTakeFirstOrThrow()).id;
    const secret = await signingSecret(store.db);
    const tokens: string[] = [];
    for (let i = 0; i < 30; i++) tokens.push((await issueTokens(store.db, secret, userId)).refreshToken);
    // Both walk the same tokens in the same order, so they reach each one together.
    const [a, b] = await Promise.all([replicaSays('refresh', catalog, ...tokens), replicaSays('refresh', catalog, ...tokens)]);
    const winners: string[] = [];
    tokens.forEach((_token, i) => {
      const outcomes = [a?.[i], b?.[i]];
      expect(outcomes.filter((o) => o === 'lost'), `token ${i}: ${outcomes.join(' / ')}`).toHaveLength(1);
      winners.push((outcomes.find((o) => o?.startsWith('won ')) as string).slice(4));
    });
    const live = await store.db.selectFrom('refresh_token').select('token').where('user_id', '=', userId).where('revoked', '=', 0).execute();
    expect(live.map((r) => r.token).sort()).toEqual(winners.sort());
  }, 60_000);
});

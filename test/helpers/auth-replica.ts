// A replica's part in test/core/auth-replicas.test.ts, as a process of its own (on SQLite, connections of one process
// would wait for each other's locks on the one thread). `secret CATALOG`: prints the signing secret (base64).
// `refresh CATALOG TOKEN...`: trades each refresh token in turn and prints one line per token, "won <new token>" or "lost".
import { SignInPolicy } from '../../src/core/auth/login-rate-limit.ts';
import { refreshSession } from '../../src/core/auth/refresh-tokens.ts';
import { signingSecret } from '../../src/core/auth/tokens.ts';
import { openStore } from '../../src/core/store/store.ts';

const [mode, catalog, ...tokens] = process.argv.slice(2);
const store = await openStore(catalog as string);
try {
  const secret = await signingSecret(store.db);
  if (mode === 'secret') process.stdout.write(`${Buffer.from(secret).toString('base64')}\n`);
  else {
    const policy = new SignInPolicy(store.bookkeeping);
    for (const [i, token] of tokens.entries()) {
      // The replica that loses a token's race counts a failure, in the catalog for all: one address per token keeps
      // the lost races of this test under the address limit.
      const outcome = await refreshSession(store.db, secret, policy, `10.0.${i >> 8}.${i & 255}`, token).then(
        (pair) => `won ${pair.refreshToken}`,
        (error: unknown) => (/Invalid credentials/.test(String(error)) ? 'lost' : `error ${String(error)}`),
      );
      process.stdout.write(`${outcome}\n`);
    }
  }
} finally {
  await store.close();
}

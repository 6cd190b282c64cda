// The caller's KOReader sync account (Grimmory's KoreaderUserController): credentials and the two switches.
import Type from 'typebox';
import { getAccount, KoreaderError, saveAccount, setSyncEnabled, setSyncWithWebReader } from '../../core/koreader/accounts.ts';
import type { Db } from '../../core/store/store.ts';
import { principalOf } from '../authenticate.ts';
import { ApiError } from '../http-errors.ts';
import { adminOr, type RouteSpec } from '../route-spec.ts';

const BASE = '/api/v1/koreader-users/me';
const RULE = adminOr('canSyncKoReader');

const EnabledQuery = Type.Object({ enabled: Type.Boolean() });
const AccountRequest = Type.Object({ username: Type.Optional(Type.Unknown()), password: Type.Optional(Type.Unknown()) }, { additionalProperties: true });

const STATUS = { NOT_FOUND: 404, INVALID: 400, CONFLICT: 400 } as const;

async function accountCall<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (error instanceof KoreaderError) throw new ApiError(STATUS[error.code], error.message);
    throw error;
  }
}

function toggle(url: string, set: (db: Db, userId: number, enabled: boolean) => Promise<void>): RouteSpec {
  return {
    method: 'PATCH',
    url,
    auth: 'jwt',
    rule: RULE,
    schema: { querystring: EnabledQuery },
    handler: async (request, reply, ctx) => {
      const { enabled } = request.query as { enabled: boolean };
      await accountCall(() => set(ctx.store.db, principalOf(request).userId, enabled));
      return reply.status(204).send();
    },
  };
}

export const koreaderUserRoutes: RouteSpec[] = [
  {
    method: 'GET',
    url: BASE,
    auth: 'jwt',
    rule: RULE,
    handler: (request, _reply, ctx) => accountCall(() => getAccount(ctx.store.db, principalOf(request).userId)),
  },
  {
    method: 'PUT',
    url: BASE,
    auth: 'jwt',
    rule: RULE,
    schema: { body: AccountRequest },
    handler: (request, _reply, ctx) => {
      const body = request.body as { username?: unknown; password?: unknown };
      return accountCall(() => saveAccount(ctx.store.db, principalOf(request).userId, body));
    },
  },
  toggle(`${BASE}/sync`, setSyncEnabled),
  toggle(`${BASE}/sync-progress-with-grimmory`, setSyncWithWebReader),
  // Deprecated alias Grimmory still serves.
  toggle(`${BASE}/sync-progress-with-booklore`, setSyncWithWebReader),
];

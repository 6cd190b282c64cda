// KOReader's "Progress sync" protocol (kosync) under /api/koreader, as KOReader's own sync server speaks it: header
// credentials, `{code, message}` errors, `{}` for a document without progress. See docs/koreader.md.
import Type from 'typebox';
import type { FastifyReply } from 'fastify';
import { AUTH_FAILURE_WINDOW_MS } from '../../core/auth/login-rate-limit.ts';
import { checkCredentials, type CredentialFailure, type SyncSession } from '../../core/koreader/accounts.ts';
import { pullProgress, pushProgress } from '../../core/koreader/sync.ts';
import { findDocument } from '../../core/koreader/documents.ts';
import type { DaemonContext } from '../context.ts';
import { signInPolicy } from '../sign-in-policy.ts';
import { syncToHardcover } from '../hardcover-sync.ts';
import type { RouteRequest, RouteSpec } from '../route-spec.ts';

const BASE = '/api/koreader';

/** Error codes of KOReader's sync server (and of its web framework for the Accept check). */
const KOSYNC_ERRORS = {
  unsupportedVersion: [412, 102, 'Unsupported version specified in the Accept header.'],
  notHash: [400, 104, 'Body should be a JSON hash.'],
  unauthorized: [401, 2001, 'Unauthorized'],
  // Bindery's own (the reference server has no limit): the sign-in policy refused the address or the name.
  rateLimited: [429, 2001, 'Too many failed sign-in attempts. Please try again later.'],
  syncDisabled: [401, 2001, 'Sync is disabled for this user'],
  notAllowed: [401, 2001, 'KOReader sync is not allowed for this user'],
  registrationDisabled: [402, 2005, 'User registration is disabled.'],
  invalidFields: [403, 2003, 'Invalid request'],
  documentMissing: [403, 2004, "Field 'document' not provided."],
} as const;

type KosyncError = keyof typeof KOSYNC_ERRORS;

/** Every answer is `application/json`, whatever the Accept header asked for (as the reference server does). */
function json(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return reply.status(status).type('application/json').send(body);
}

function fail(reply: FastifyReply, error: KosyncError): FastifyReply {
  const [status, code, message] = KOSYNC_ERRORS[error];
  return json(reply, status, { code, message });
}

/**
 * KOReader sends `Accept: application/vnd.koreader.v1+json`. The reference server refuses anything else; this one
 * is lenient (curl, browsers and Grimmory clients send other values) and only refuses another protocol version.
 */
function acceptRefused(request: RouteRequest, reply: FastifyReply): FastifyReply | undefined {
  const accept = request.headers.accept;
  const version = typeof accept === 'string' ? /application\/vnd\.koreader\.v(\d+)/i.exec(accept)?.[1] : undefined;
  return version !== undefined && version !== '1' ? fail(reply, 'unsupportedVersion') : undefined;
}

function header(request: RouteRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}

const FAILURE_ERRORS: Partial<Record<CredentialFailure, KosyncError>> = { SYNC_DISABLED: 'syncDisabled', NO_PERMISSION: 'notAllowed', RATE_LIMITED: 'rateLimited' };

/**
 * Accept check, then the device's credentials under the daemon's sign-in policy; sends the refusal itself and returns
 * undefined when either fails.
 */
async function session(request: RouteRequest, reply: FastifyReply, ctx: DaemonContext): Promise<SyncSession | undefined> {
  if (acceptRefused(request, reply)) return undefined;
  const result = await checkCredentials(ctx.store.db, signInPolicy(ctx), request.ip, header(request, 'x-auth-user'), header(request, 'x-auth-key'));
  if (typeof result !== 'string') return result;
  if (result === 'RATE_LIMITED') reply.header('retry-after', String(AUTH_FAILURE_WINDOW_MS / 1000));
  fail(reply, FAILURE_ERRORS[result] ?? 'unauthorized');
  return undefined;
}

/** A document id the server can store and serve back on GET: non-empty, no `:` (as the reference), no `/`. */
const validDocument = (value: unknown): value is string => typeof value === 'string' && value !== '' && !/[:/]/.test(value);

const DocumentParams = Type.Object({ document: Type.String() });

export const kosyncRoutes: RouteSpec[] = [
  {
    method: 'GET',
    url: `${BASE}/healthcheck`,
    auth: 'custom',
    handler: (request, reply) => acceptRefused(request, reply) ?? json(reply, 200, { state: 'OK' }),
  },
  {
    method: 'GET',
    url: `${BASE}/users/auth`,
    auth: 'custom',
    handler: async (request, reply, ctx) => {
      const device = await session(request, reply, ctx);
      return device ? json(reply, 200, { authorized: 'OK', username: device.username }) : reply;
    },
  },
  {
    // Accounts are made in the web interface; KOReader's "Register" button is always refused (the body is not read).
    method: 'POST',
    url: `${BASE}/users/create`,
    auth: 'custom',
    bodyLimit: 64 * 1024,
    handler: (request, reply) => acceptRefused(request, reply) ?? fail(reply, 'registrationDisabled'),
  },
  {
    method: 'GET',
    url: `${BASE}/syncs/progress/{document}`,
    auth: 'custom',
    schema: { params: DocumentParams },
    handler: async (request, reply, ctx) => {
      const device = await session(request, reply, ctx);
      if (!device) return reply;
      const { document } = request.params as { document: string };
      if (!validDocument(document)) return fail(reply, 'documentMissing');
      return json(reply, 200, (await pullProgress(ctx.store.db, device, document)) ?? {});
    },
  },
  {
    method: 'PUT',
    url: `${BASE}/syncs/progress`,
    auth: 'custom',
    bodyLimit: 64 * 1024,
    handler: async (request, reply, ctx) => {
      const device = await session(request, reply, ctx);
      if (!device) return reply;
      const body = request.body;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) return fail(reply, 'notHash');
      const { document, progress, percentage, device: name, device_id: deviceId } = body as Record<string, unknown>;
      if (!validDocument(document)) return fail(reply, 'documentMissing');
      // The reference server reads the percentage with tonumber(): numbers and numeric strings.
      const fraction = typeof percentage === 'number' ? percentage : typeof percentage === 'string' && percentage.trim() !== '' ? Number(percentage) : Number.NaN;
      if (!Number.isFinite(fraction) || typeof progress !== 'string' || typeof name !== 'string') return fail(reply, 'invalidFields');
      const timestamp = await pushProgress(ctx.store.readingState.db, device, {
        document,
        progress,
        percentage: fraction,
        device: name,
        deviceId: typeof deviceId === 'string' ? deviceId : null,
      });
      // KOReader sends a 0..1 fraction; some clients send a percent (Grimmory takes either).
      syncToHardcover(ctx, device.principal.userId, async () => (await findDocument(ctx.store.db, device.principal, document))?.bookId, fraction <= 1 ? fraction * 100 : fraction);
      return json(reply, 200, { document, timestamp });
    },
  },
];

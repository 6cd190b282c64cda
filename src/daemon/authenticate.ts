// The single gate every route passes: who is calling (bearer or ?token=), then whether the route's rule admits them.
// Only access tokens count, and only while the user's session version is the one the token was signed under.
import type { FastifyReply } from 'fastify';
import { hasAny, knownPrincipal, principalFor, type Principal } from '../core/auth/principal.ts';
import { knownAccessClaims, verifyAccessToken, type VerifiedClaims } from '../core/auth/tokens.ts';
import type { DaemonContext } from './context.ts';
import { errorBody } from './http-errors.ts';
import type { RouteRequest, RouteSpec, Rule } from './route-spec.ts';

function bearer(request: RouteRequest): string | undefined {
  const header = request.headers.authorization;
  if (header && /^Bearer\s+/i.test(header)) return header.replace(/^Bearer\s+/i, '').trim();
  return undefined;
}

function queryToken(request: RouteRequest): string | undefined {
  const token = (request.query as Record<string, unknown> | undefined)?.token;
  return typeof token === 'string' && token !== '' ? token : undefined;
}

export async function principalFromToken(ctx: DaemonContext, token: string | undefined): Promise<Principal | undefined> {
  if (!token) return undefined;
  const claims = await verifyAccessToken(ctx.jwtSecret, token);
  if (!claims) return undefined;
  // The principal is cached until the catalog changes, so this costs no query of its own.
  return ofSameSession(await principalFor(ctx.store, claims.userId), claims);
}

/** The principal, while the user's session version is still the one the token was signed under. */
function ofSameSession(principal: Principal | undefined, claims: VerifiedClaims): Principal | undefined {
  return principal?.sessionVersion === claims.sessionVersion ? principal : undefined;
}

export function ruleAdmits(rule: Rule | undefined, principal: Principal, request: RouteRequest): boolean {
  if (rule === undefined || rule === 'any') return true;
  if ('anyOf' in rule) return hasAny(principal, rule.anyOf);
  const params = { ...(request.query as Record<string, unknown>), ...(request.params as Record<string, unknown>) };
  return String(params[rule.param]) === String(principal.userId) || hasAny(principal, rule.selfOrAnyOf);
}

/** Spring's default error body, which Grimmory sends when its security filters reject a request. */
export function filterRejection(reply: FastifyReply, request: RouteRequest, status: 401 | 403): FastifyReply {
  return reply.status(status).send({
    timestamp: new Date().toISOString(),
    status,
    error: status === 401 ? 'Unauthorized' : 'Forbidden',
    path: request.url.split('?')[0],
  });
}

type GateSpec = Pick<RouteSpec, 'auth' | 'rule'>;

function tokenOf(spec: GateSpec, request: RouteRequest): string | undefined {
  return bearer(request) ?? (spec.auth === 'jwt-or-query' ? queryToken(request) : undefined);
}

export async function authenticate(spec: GateSpec, request: RouteRequest, reply: FastifyReply, ctx: DaemonContext): Promise<FastifyReply | undefined> {
  if (spec.auth === 'custom') return undefined;
  return admitCaller(spec, await principalFromToken(ctx, tokenOf(spec, request)), request, reply);
}

/** `authenticateAtOnce` could not tell without a promise (a token or principal not kept yet). */
export const NOT_KNOWN_AT_ONCE = Symbol('not known at once');

/**
 * What `authenticate` answers, without its chain of promises, when the caller's token was verified recently and its
 * principal is kept for the catalog as it is now (a client's second request on): NOT_KNOWN_AT_ONCE otherwise.
 */
export function authenticateAtOnce(spec: GateSpec, request: RouteRequest, reply: FastifyReply, ctx: DaemonContext): FastifyReply | undefined | typeof NOT_KNOWN_AT_ONCE {
  if (spec.auth === 'custom') return undefined;
  const token = tokenOf(spec, request);
  if (!token) return admitCaller(spec, undefined, request, reply);
  const claims = knownAccessClaims(ctx.jwtSecret, token);
  const principal = claims && ofSameSession(knownPrincipal(ctx.store, claims.userId), claims);
  if (!principal) return NOT_KNOWN_AT_ONCE;
  return admitCaller(spec, principal, request, reply);
}

function admitCaller(spec: GateSpec, principal: Principal | undefined, request: RouteRequest, reply: FastifyReply): FastifyReply | undefined {
  if (principal) request.principal = principal;
  if (spec.auth === 'public') return undefined;
  if (!principal) return filterRejection(reply, request, 401);
  if (!ruleAdmits(spec.rule, principal, request)) return reply.status(403).send(errorBody(403, 'Access denied.'));
  return undefined;
}

/** The caller of an authenticated route (the gate guarantees it is there). */
export function principalOf(request: RouteRequest): Principal {
  if (!request.principal) throw new Error('route reached without a principal');
  return request.principal;
}

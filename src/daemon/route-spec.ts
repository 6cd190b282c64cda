// Every route declares how the caller authenticates and which rule admits them; one mechanism enforces both.
import type { FastifyReply, FastifyRequest, FastifySchema, HTTPMethods } from 'fastify';
import type { Permission } from '../core/auth/permissions.ts';
import type { Principal } from '../core/auth/principal.ts';
import type { DaemonContext } from './context.ts';

/**
 * How credentials are presented:
 * - `public`: none needed (a valid token is still read when present);
 * - `jwt`: `Authorization: Bearer <accessToken>`;
 * - `jwt-or-query`: the bearer header or `?token=<accessToken>` (media, downloads, streams);
 * - `custom`: the route group authenticates itself (OPDS/Komga Basic, KOReader headers, Kobo path token).
 */
export type AuthMode = 'public' | 'jwt' | 'jwt-or-query' | 'custom';

/**
 * Who may call, once authenticated:
 * - `any`: every authenticated user;
 * - `{ anyOf }`: holders of any listed flag (include `admin` explicitly, as Grimmory's `admin | canX` rules do);
 * - `{ selfOrAnyOf, param }`: the user named by a path/query parameter, or holders of a listed flag.
 */
export type Rule = 'any' | { anyOf: readonly Permission[] } | { selfOrAnyOf: readonly Permission[]; param: string };

export interface RouteRequest extends FastifyRequest {
  principal?: Principal;
}

export interface RouteSpec {
  method: HTTPMethods;
  /** Path as Grimmory has it, with `{param}` placeholders (converted to fastify's `:param`). */
  url: string;
  auth: AuthMode;
  rule?: Rule;
  schema?: FastifySchema;
  /** Body size limit for this route, in bytes. */
  bodyLimit?: number;
  /**
   * The route takes `multipart/form-data` (uploads): it is registered where @fastify/multipart is, and its handler
   * reads the parts as streams (`request.parts()`), so no body limit applies before it does.
   */
  multipart?: boolean;
  /** The route also takes `application/x-www-form-urlencoded` bodies (read as an object of strings); others answer 415. */
  formBody?: boolean;
  /**
   * The body is the raw bytes of any content type (a book file's new content): the handler gets `request.body` as the
   * unread request stream (JSON and form bodies are still parsed as such) and enforces its own size limit.
   */
  rawBody?: boolean;
  handler: (request: RouteRequest, reply: FastifyReply, ctx: DaemonContext) => unknown;
}

export const ADMIN: Rule = { anyOf: ['admin'] };
export const adminOr = (...flags: Permission[]): Rule => ({ anyOf: ['admin', ...flags] });

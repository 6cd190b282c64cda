// Audit hooks for route handlers: the acting user and the client address come from the request; writing the row can
// never fail or slow the action beyond one insert (errors are logged and dropped).
import { AccountError } from '../core/auth/account-error.ts';
import { settingAuditAction, type AuditAction } from '../core/audit/audit-actions.ts';
import { recordAudit, SYSTEM_USERNAME } from '../core/audit/audit-log.ts';
import { findUserByName } from '../core/users/users.ts';
import type { DaemonContext } from './context.ts';
import type { RouteRequest } from './route-spec.ts';

export interface AuditEntity {
  type: string;
  id?: number | null;
}

export interface AuditActor {
  userId: number | null;
  username: string;
}

/** Records `action` as done by the request's signed-in user (or `actor`, or "system") from the request's address. */
export async function audit(ctx: DaemonContext, request: RouteRequest, action: AuditAction, description: string, entity?: AuditEntity, actor?: AuditActor): Promise<void> {
  try {
    const who = actor ?? (request.principal ? { userId: request.principal.userId, username: request.principal.username } : { userId: null, username: SYSTEM_USERNAME });
    await recordAudit(
      ctx.store.db,
      { ...who, action, description, entityType: entity?.type ?? null, entityId: entity?.id ?? null, ip: request.ip },
      { retentionDays: ctx.config.auditLogRetentionDays, onError: (error) => ctx.log.warn({ err: error, action }, 'audit log entry not written') },
    );
  } catch (error) {
    ctx.log.warn({ err: error, action }, 'audit log entry not written');
  }
}

/** Records an action on a user account, described with the account's username (looked up by id). */
export async function auditUser(ctx: DaemonContext, request: RouteRequest, action: AuditAction, describe: (username: string) => string, userId: number | null | undefined): Promise<void> {
  if (userId === null || userId === undefined) return;
  const user = await ctx.store.db.selectFrom('users').select('username').where('id', '=', userId).executeTakeFirst().catch(() => undefined);
  await audit(ctx, request, action, describe(user?.username ?? String(userId)), { type: 'User', id: userId });
}

/** METADATA_UPDATED for one book, described with its title. */
export async function auditMetadataUpdate(ctx: DaemonContext, request: RouteRequest, bookId: number): Promise<void> {
  const row = await ctx.store.db.selectFrom('book_metadata').select('title').where('book_id', '=', bookId).executeTakeFirst().catch(() => undefined);
  await audit(ctx, request, 'METADATA_UPDATED', `Updated metadata for book: ${row?.title ?? bookId}`, { type: 'Book', id: bookId });
}

/** BOOK_UPLOADED for each file a bookdrop import placed in a library (AuditAction has no bookdrop value of its own). */
export async function auditBookdropImport(ctx: DaemonContext, request: RouteRequest, results: readonly { success: boolean; fileName: string | null; bookId?: number }[]): Promise<void> {
  for (const r of results) {
    if (r.success) await audit(ctx, request, 'BOOK_UPLOADED', `Imported from bookdrop: ${r.fileName ?? ''}`, { type: 'Book', id: r.bookId ?? null });
  }
}

/** One SETTINGS_UPDATED (or OIDC_*) row per changed application setting, named by its AppSettingKey constant. */
export async function auditSettings(ctx: DaemonContext, request: RouteRequest, names: readonly string[]): Promise<void> {
  for (const name of names) await audit(ctx, request, settingAuditAction(name), `Updated setting: ${name}`);
}

/**
 * Runs a password sign-in and records its outcome: LOGIN_SUCCESS as the user, LOGIN_FAILED or LOGIN_RATE_LIMITED
 * as "system" (nobody is signed in yet). The sign-in's own result or error passes through unchanged.
 */
export async function auditedLogin<T>(ctx: DaemonContext, request: RouteRequest, username: string, login: () => Promise<T>): Promise<T> {
  let result: T;
  try {
    result = await login();
  } catch (error) {
    if (error instanceof AccountError && error.code === 'INVALID_CREDENTIALS') await audit(ctx, request, 'LOGIN_FAILED', `Login failed for user: ${username}`);
    else if (error instanceof AccountError && error.code === 'RATE_LIMITED') await audit(ctx, request, 'LOGIN_RATE_LIMITED', `Login rate limited for IP: ${request.ip}`);
    throw error;
  }
  const user = await findUserByName(ctx.store.db, username).catch(() => undefined);
  const actor = user ? { userId: user.id, username: user.username } : { userId: null, username };
  await audit(ctx, request, 'LOGIN_SUCCESS', `Login successful for user: ${actor.username}`, { type: 'User', id: actor.userId }, actor);
  return result;
}

/** Runs a token refresh and records it when the refresh limit refused it. */
export async function auditedRefresh<T>(ctx: DaemonContext, request: RouteRequest, refresh: () => Promise<T>): Promise<T> {
  try {
    return await refresh();
  } catch (error) {
    if (error instanceof AccountError && error.code === 'RATE_LIMITED') await audit(ctx, request, 'REFRESH_RATE_LIMITED', `Token refresh rate limited for IP: ${request.ip}`);
    throw error;
  }
}

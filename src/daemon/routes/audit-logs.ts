// The audit log for admins (Grimmory's AuditLogController): a filtered page, newest first, and the names to filter by.
import Type from 'typebox';
import { AUDIT_ACTIONS, type AuditAction } from '../../core/audit/audit-actions.ts';
import { auditUsernames, listAuditLogs, parseLocalDateTime } from '../../core/audit/audit-log.ts';
import { badRequest, localDateTime } from '../http-errors.ts';
import { ADMIN, type RouteSpec } from '../route-spec.ts';
import { springPage } from '../../core/spring-page.ts';

/** Grimmory takes any page size; one page is held in memory here, so a page is capped. */
const MAX_PAGE_SIZE = 1000;

const AuditLogQuery = Type.Object({
  page: Type.Optional(Type.Integer({ default: 0 })),
  size: Type.Optional(Type.Integer({ default: 25 })),
  // An empty value means no filter, as Spring binds an empty enum parameter to null.
  action: Type.Optional(Type.String({ enum: ['', ...AUDIT_ACTIONS] })),
  userId: Type.Optional(Type.Integer()),
  username: Type.Optional(Type.String()),
  from: Type.Optional(Type.String()),
  to: Type.Optional(Type.String()),
});

interface AuditLogParams {
  page?: number;
  size?: number;
  action?: AuditAction | '';
  userId?: number;
  username?: string;
  from?: string;
  to?: string;
}

function dateTimeParam(name: string, text: string | undefined): Date | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const date = parseLocalDateTime(text);
  if (!date) throw badRequest('Validation error', [`${name}: must be a date-time such as 2024-05-01T00:00:00`]);
  return date;
}

export const auditLogRoutes: RouteSpec[] = [
  {
    method: 'GET',
    url: '/api/v1/audit-logs',
    auth: 'jwt',
    rule: ADMIN,
    schema: { querystring: AuditLogQuery },
    handler: async (request, _reply, ctx) => {
      const q = request.query as AuditLogParams;
      const page = q.page ?? 0;
      const size = q.size ?? 25;
      // Spring's PageRequest refusals, with its words.
      if (page < 0) throw badRequest('Page index must not be less than zero');
      if (size < 1) throw badRequest('Page size must not be less than one');
      const from = dateTimeParam('from', q.from);
      const to = dateTimeParam('to', q.to);
      const pageSize = Math.min(size, MAX_PAGE_SIZE);
      const { rows, total } = await listAuditLogs(ctx.store.db, {
        page,
        size: pageSize,
        ...(q.action !== undefined && q.action !== '' ? { action: q.action } : {}),
        ...(q.userId !== undefined ? { userId: q.userId } : {}),
        ...(q.username !== undefined && q.username !== '' ? { username: q.username } : {}),
        ...(from ? { from } : {}),
        ...(to ? { to } : {}),
      });
      return springPage(
        rows.map((r) => ({ ...r, createdAt: localDateTime(new Date(r.createdAt)) })),
        page,
        pageSize,
        total,
      );
    },
  },
  {
    method: 'GET',
    url: '/api/v1/audit-logs/usernames',
    auth: 'jwt',
    rule: ADMIN,
    handler: async (_request, _reply, ctx) => auditUsernames(ctx.store.db),
  },
];

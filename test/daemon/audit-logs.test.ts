// The audit log end to end: actions done through the API leave rows, the admin pages through them with Grimmory's
// filters and page shape, old rows are pruned, and a broken log never breaks the action it records.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneAuditLog, recordAudit, parseLocalDateTime } from '../../src/core/audit/audit-log.ts';
import { settingAuditAction } from '../../src/core/audit/audit-actions.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

interface AuditRow {
  id: number;
  userId: number | null;
  username: string;
  action: string;
  entityType: string | null;
  entityId: number | null;
  description: string;
  ipAddress: string | null;
  countryCode: string | null;
  createdAt: string;
}
interface AuditPage {
  content: AuditRow[];
  page: { size: number; number: number; totalElements: number; totalPages: number };
}

let d: TestDaemon;
let lib: TempLibrary;
let admin: string;
let adminId: number;
let smtp: SMTPServer;
let smtpPort: number;

const auth = (token: string) => ({ authorization: `Bearer ${token}` });

async function logs(query = '', token = admin): Promise<AuditPage> {
  const res = await d.inject({ method: 'GET', url: `/api/v1/audit-logs${query ? `?${query}` : ''}`, headers: auth(token) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as AuditPage;
}

async function rowsFor(action: string): Promise<AuditRow[]> {
  return (await logs(`action=${action}&size=100`)).content;
}

async function backgroundDone(): Promise<void> {
  while (d.ctx.background.size > 0) await Promise.allSettled([...d.ctx.background]);
}

beforeAll(async () => {
  smtp = new SMTPServer({ disabledCommands: ['STARTTLS', 'AUTH'], onData: (stream, _session, callback) => stream.on('data', () => undefined).on('end', () => callback()) });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  smtpPort = (smtp.server.address() as AddressInfo).port;
  d = await startTestDaemon();
  lib = makeTempLibrary();
  await writeSimpleEpub(lib.path('Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'] });
  admin = await d.setupAdmin('admin', 'admin-password');
  adminId = (await d.store.db.selectFrom('users').select('id').where('username', '=', 'admin').executeTakeFirstOrThrow()).id;
}, 60_000);

afterAll(async () => {
  await d?.close();
  await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
  lib?.cleanup();
});

describe('sign-in events', () => {
  it('records a successful sign-in as the user, with the address it came from', async () => {
    const [row] = await rowsFor('LOGIN_SUCCESS');
    expect(row).toMatchObject({ userId: adminId, username: 'admin', action: 'LOGIN_SUCCESS', entityType: 'User', entityId: adminId, description: 'Login successful for user: admin', countryCode: null });
    expect(row?.ipAddress).toBe('127.0.0.1');
  });

  it('records a failed sign-in as "system", naming the account tried, and the answer stays 400', async () => {
    const res = await d.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'admin', password: 'wrong-password' } });
    expect(res.statusCode).toBe(400);
    const [row] = await rowsFor('LOGIN_FAILED');
    expect(row).toMatchObject({ userId: null, username: 'system', action: 'LOGIN_FAILED', description: 'Login failed for user: admin', entityId: null });
  });

  it('records a sign-out', async () => {
    const token = await d.login('admin', 'admin-password');
    expect((await d.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: auth(token) })).statusCode).toBe(200);
    expect((await rowsFor('LOGOUT'))[0]).toMatchObject({ userId: adminId, description: 'User logged out: admin' });
  });
});

describe('account, library, book and settings events', () => {
  it('records user creation, permission and profile changes, password changes and deletion', async () => {
    const created = await d.inject({
      method: 'POST',
      url: '/api/v1/auth/register',
      headers: auth(admin),
      payload: { username: 'reader', password: 'reader-password', name: 'Reader', email: 'reader@example.com', permissionUpload: true },
    });
    expect(created.statusCode).toBe(204);
    const readerId = (await d.store.db.selectFrom('users').select('id').where('username', '=', 'reader').executeTakeFirstOrThrow()).id;
    expect((await rowsFor('USER_CREATED'))[0]).toMatchObject({ userId: adminId, username: 'admin', entityType: 'User', entityId: readerId, description: 'Created user: reader' });

    const updated = await d.inject({ method: 'PUT', url: `/api/v1/users/${readerId}`, headers: auth(admin), payload: { name: 'Reader', permissions: { admin: true }, assignedLibraries: [] } });
    expect(updated.statusCode, updated.body).toBe(200);
    expect((await rowsFor('PERMISSIONS_CHANGED'))[0]).toMatchObject({ entityId: readerId, description: 'Changed permissions for user: reader' });
    expect((await rowsFor('USER_UPDATED'))[0]).toMatchObject({ entityId: readerId, description: 'Updated user: reader' });

    const reset = await d.inject({ method: 'PUT', url: '/api/v1/users/change-user-password', headers: auth(admin), payload: { userId: readerId, newPassword: 'another-password' } });
    expect(reset.statusCode).toBe(200);
    expect((await rowsFor('PASSWORD_CHANGED'))[0]).toMatchObject({ userId: adminId, entityId: readerId, description: 'Password changed for user: reader' });

    expect((await d.inject({ method: 'DELETE', url: `/api/v1/users/${readerId}`, headers: auth(admin) })).statusCode).toBe(200);
    expect((await rowsFor('USER_DELETED'))[0]).toMatchObject({ entityId: readerId, description: 'Deleted user: reader' });
  });

  it('records library creation, change, rescan, metadata edits, e-mailing, book deletion and library deletion', async () => {
    const created = await d.inject({ method: 'POST', url: '/api/v1/libraries', headers: auth(admin), payload: { name: 'Main', paths: [{ path: lib.root }] } });
    expect(created.statusCode, created.body).toBe(200);
    const libraryId = (created.json() as { id: number }).id;
    await backgroundDone();
    expect((await rowsFor('LIBRARY_CREATED'))[0]).toMatchObject({ entityType: 'Library', entityId: libraryId, description: 'Created library: Main' });

    const renamed = await d.inject({ method: 'PUT', url: `/api/v1/libraries/${libraryId}`, headers: auth(admin), payload: { name: 'Shelf', paths: [{ path: lib.root }] } });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect((await rowsFor('LIBRARY_UPDATED'))[0]).toMatchObject({ entityId: libraryId, description: 'Updated library: Shelf' });

    expect((await d.inject({ method: 'PUT', url: `/api/v1/libraries/${libraryId}/refresh`, headers: auth(admin) })).statusCode).toBe(204);
    await backgroundDone();
    expect((await rowsFor('LIBRARY_SCANNED'))[0]).toMatchObject({ entityId: libraryId, description: 'Scanned library: Shelf' });

    const book = await d.store.db.selectFrom('book').select('id').where('library_id', '=', libraryId).executeTakeFirstOrThrow();
    const edit = await d.inject({ method: 'PUT', url: `/api/v1/books/${book.id}/metadata`, headers: auth(admin), payload: { metadata: { title: 'Dune Messiah', authors: ['Frank Herbert'] } } });
    expect(edit.statusCode, edit.body).toBe(200);
    await backgroundDone();
    expect((await rowsFor('METADATA_UPDATED'))[0]).toMatchObject({ entityType: 'Book', entityId: book.id, description: 'Updated metadata for book: Dune Messiah' });

    const provider = await d.inject({ method: 'POST', url: '/api/v1/email/providers', headers: auth(admin), payload: { name: 'Local', host: '127.0.0.1', port: smtpPort, fromAddress: 'library@example.com', auth: false, startTls: false } });
    expect(provider.statusCode, provider.body).toBe(200);
    const recipient = await d.inject({ method: 'POST', url: '/api/v1/email/recipients', headers: auth(admin), payload: { email: 'reader@kindle.example', name: 'Kindle' } });
    expect(recipient.statusCode, recipient.body).toBe(200);
    expect((await d.inject({ method: 'POST', url: `/api/v1/email/book/${book.id}`, headers: auth(admin) })).statusCode).toBe(204);
    await backgroundDone();
    expect((await rowsFor('BOOK_SENT'))[0]).toMatchObject({ userId: adminId, entityType: 'Book', entityId: book.id, description: 'Sent book: Dune Messiah to reader@kindle.example' });

    const deleted = await d.inject({ method: 'DELETE', url: `/api/v1/books?ids=${book.id}`, headers: auth(admin) });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect((await rowsFor('BOOK_DELETED'))[0]).toMatchObject({ entityType: 'Book', entityId: book.id, description: `Deleted 1 book(s): ${book.id}` });

    expect((await d.inject({ method: 'DELETE', url: `/api/v1/libraries/${libraryId}`, headers: auth(admin) })).statusCode).toBe(204);
    expect((await rowsFor('LIBRARY_DELETED'))[0]).toMatchObject({ entityId: libraryId, description: 'Deleted library: Shelf' });
  });

  it('records each changed setting under its AppSettingKey name, OIDC keys under the OIDC actions', async () => {
    const res = await d.inject({ method: 'PUT', url: '/api/v1/settings', headers: auth(admin), payload: [{ name: 'OPDS_SERVER_ENABLED', value: true }, { name: 'OIDC_AUTO_PROVISION_DETAILS', value: null }] });
    expect(res.statusCode, res.body).toBe(200);
    expect((await rowsFor('SETTINGS_UPDATED'))[0]).toMatchObject({ description: 'Updated setting: OPDS_SERVER_ENABLED', entityType: null });
    expect(settingAuditAction('OIDC_FORCE_ONLY_MODE')).toBe('OIDC_FORCE_ONLY_MODE_CHANGED');
    expect(settingAuditAction('OIDC_ENABLED')).toBe('OIDC_CONFIG_CHANGED');
  });

  it('records shelves as they are created and deleted', async () => {
    const shelf = await d.inject({ method: 'POST', url: '/api/v1/shelves', headers: auth(admin), payload: { name: 'Favourites', icon: 'star', iconType: 'LUCIDE' } });
    expect(shelf.statusCode, shelf.body).toBe(201);
    const id = (shelf.json() as { id: number }).id;
    expect((await rowsFor('SHELF_CREATED'))[0]).toMatchObject({ entityType: 'Shelf', entityId: id, description: 'Created shelf: Favourites' });
    expect((await d.inject({ method: 'DELETE', url: `/api/v1/shelves/${id}`, headers: auth(admin) })).statusCode).toBe(204);
    expect((await rowsFor('SHELF_DELETED'))[0]).toMatchObject({ entityId: id, description: 'Deleted shelf: Favourites' });
  });
});

describe('GET /api/v1/audit-logs', () => {
  it('answers a Spring page, newest first, with LocalDateTime stamps', async () => {
    const all = await logs('size=500');
    expect(all.page.totalElements).toBe(all.content.length);
    expect(all.page).toEqual({ size: 500, number: 0, totalElements: all.content.length, totalPages: 1 });
    const ids = all.content.map((r) => r.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    for (const row of all.content) expect(row.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}$/);
    expect(Object.keys(all.content[0] as object).sort()).toEqual(['action', 'countryCode', 'createdAt', 'description', 'entityId', 'entityType', 'id', 'ipAddress', 'userId', 'username']);

    const second = await logs('page=1&size=2');
    expect(second.page).toEqual({ size: 2, number: 1, totalElements: all.content.length, totalPages: Math.ceil(all.content.length / 2) });
    expect(second.content.map((r) => r.id)).toEqual(ids.slice(2, 4));
  });

  it('filters by action, user id, username and time range', async () => {
    const failed = await logs('action=LOGIN_FAILED');
    expect(failed.content.length).toBeGreaterThan(0);
    expect(failed.content.every((r) => r.action === 'LOGIN_FAILED')).toBe(true);
    const mine = await logs(`userId=${adminId}&size=500`);
    expect(mine.content.every((r) => r.userId === adminId)).toBe(true);
    const system = await logs('username=system&size=500');
    expect(system.content.map((r) => r.username)).toEqual(system.content.map(() => 'system'));
    expect(system.page.totalElements).toBe(system.content.length);

    const pad = (n: number): string => String(n).padStart(2, '0');
    const local = (t: Date): string => `${t.getFullYear()}-${pad(t.getMonth() + 1)}-${pad(t.getDate())}T${pad(t.getHours())}:${pad(t.getMinutes())}:${pad(t.getSeconds())}`;
    const now = new Date();
    const today = await logs(`from=${local(new Date(now.getTime() - 3_600_000))}&to=${local(new Date(now.getTime() + 3_600_000))}&size=500`);
    expect(today.page.totalElements).toBe((await logs('size=500')).page.totalElements);
    const future = await logs(`from=${local(new Date(now.getTime() + 3_600_000))}`);
    expect(future.page.totalElements).toBe(0);
    const past = await logs(`to=${local(new Date(now.getTime() - 3_600_000))}`);
    expect(past.page.totalElements).toBe(0);
    // Empty parameters are no filter, as Spring binds them to null.
    expect((await logs('action=&username=')).page.totalElements).toBe((await logs()).page.totalElements);
  });

  it('refuses bad parameters with 400', async () => {
    for (const query of ['action=NOT_AN_ACTION', 'from=yesterday', 'to=2024-13-01T00:00:00', 'page=-1', 'size=0', 'userId=abc']) {
      const res = await d.inject({ method: 'GET', url: `/api/v1/audit-logs?${query}`, headers: auth(admin) });
      expect(res.statusCode, query).toBe(400);
      expect(res.json()).toMatchObject({ status: 400 });
    }
  });

  it('is for admins only', async () => {
    const user = await d.createUser('plain', { canUpload: true });
    for (const url of ['/api/v1/audit-logs', '/api/v1/audit-logs/usernames']) {
      expect((await d.inject({ method: 'GET', url, headers: auth(user.token) })).statusCode).toBe(403);
      expect((await d.inject({ method: 'GET', url })).statusCode).toBe(401);
    }
  });
});

describe('GET /api/v1/audit-logs/usernames', () => {
  it('lists every name in the log once, sorted', async () => {
    const res = await d.inject({ method: 'GET', url: '/api/v1/audit-logs/usernames', headers: auth(admin) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(['admin', 'system']);
  });
});

describe('retention and failure', () => {
  it('prunes rows older than the retention period when it writes, and keeps everything at 0 days', async () => {
    const db = d.store.db;
    const old = new Date(Date.now() - 120 * 24 * 3_600_000).toISOString();
    await db.insertInto('audit_log').values({ user_id: null, username: 'ghost', action: 'LOGIN_FAILED', description: 'old', created_at: old }).execute();
    expect(await pruneAuditLog(db, 0)).toBe(0);
    expect(await db.selectFrom('audit_log').select('id').where('username', '=', 'ghost').executeTakeFirst()).toBeDefined();
    expect(await pruneAuditLog(db, 90)).toBe(1);
    expect(await db.selectFrom('audit_log').select('id').where('username', '=', 'ghost').executeTakeFirst()).toBeUndefined();
    // A recent row survives a prune, and a description past the column size is cut with an ellipsis.
    expect(await recordAudit(db, { userId: null, username: 'recent', action: 'TASK_EXECUTED', description: 'x'.repeat(2000) }, { retentionDays: 1 })).toBe(true);
    const recent = await db.selectFrom('audit_log').select('description').where('username', '=', 'recent').executeTakeFirstOrThrow();
    expect(recent.description).toHaveLength(1024);
    expect(recent.description.endsWith('...')).toBe(true);
  });

  it('reads the UI’s local date-times, with or without an offset', () => {
    expect(parseLocalDateTime('2024-05-01T10:20:30')?.getTime()).toBe(new Date(2024, 4, 1, 10, 20, 30).getTime());
    expect(parseLocalDateTime('2024-05-01T10:20:30Z')?.toISOString()).toBe('2024-05-01T10:20:30.000Z');
    expect(parseLocalDateTime('2024-05-01T10:20:30.5+02:00')?.toISOString()).toBe('2024-05-01T08:20:30.500Z');
    expect(parseLocalDateTime('2024-02-30T00:00:00')).toBeUndefined();
    expect(parseLocalDateTime('2024-05-01')).toBeUndefined();
  });

  it('never fails the action it records: with the log gone, sign-in and library creation still work', async () => {
    const other = await startTestDaemon();
    try {
      const token = await other.setupAdmin('owner', 'owner-password');
      await other.store.db.schema.dropTable('audit_log').execute();
      const failed = await other.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'owner', password: 'nope-nope' } });
      expect(failed.statusCode).toBe(400);
      expect(await other.login('owner', 'owner-password')).toEqual(expect.any(String));
      const created = await other.inject({ method: 'POST', url: '/api/v1/libraries', headers: auth(token), payload: { name: 'Solo', paths: [{ path: lib.root }] } });
      expect(created.statusCode, created.body).toBe(200);
      while (other.ctx.background.size > 0) await Promise.allSettled([...other.ctx.background]);
    } finally {
      await other.close();
    }
  });
});

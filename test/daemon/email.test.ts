// Sending books by e-mail to a real SMTP server on 127.0.0.1: providers (own and shared, password never shown),
// recipients and defaults, the attachment that arrives, and the refusals.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLibrary } from '../../src/core/libraries/libraries.ts';
import { scanLibrary } from '../../src/core/scan/scanner.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

interface Received {
  from: string;
  to: string[];
  raw: string;
}

let d: TestDaemon;
let lib: TempLibrary;
let smtp: SMTPServer;
let smtpPort: number;
const inbox: Received[] = [];
let admin: string;
let mailer: { id: number; token: string };
let reader: { id: number; token: string };
let bookId: number;

async function waitForMail(count: number): Promise<void> {
  for (let i = 0; i < 100 && inbox.length < count; i++) await new Promise((r) => setTimeout(r, 50));
  expect(inbox.length).toBe(count);
}

beforeAll(async () => {
  smtp = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    authOptional: true,
    onAuth: (auth, _session, callback) => (auth.username === 'mailer' && auth.password === 's3cret' ? callback(null, { user: auth.username }) : callback(new Error('Invalid username or password'))),
    onData: (stream, session, callback) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        inbox.push({ from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  smtpPort = (smtp.server.address() as AddressInfo).port;

  d = await startTestDaemon();
  admin = await d.setupAdmin();
  lib = makeTempLibrary();
  await writeSimpleEpub(lib.path('Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'] });
  const library = await createLibrary(d.store.db, { name: 'Books', paths: [lib.root] });
  await scanLibrary(d.store, library, { coversRoot: d.ctx.paths.covers, workers: 0 });
  bookId = (await d.store.db.selectFrom('book').select('id').executeTakeFirstOrThrow()).id;
  mailer = await d.createUser('mailer', { canEmailBook: true }, [library.id]);
  reader = await d.createUser('plainreader', {}, [library.id]);
});

afterAll(async () => {
  await d.close();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
  lib.cleanup();
});

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
const call = (method: Method, url: string, token: string, payload?: unknown) =>
  d.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload === undefined ? {} : { payload: payload as object }) });
const provider = (extra: Record<string, unknown> = {}) => ({ name: 'Local', host: '127.0.0.1', port: smtpPort, username: 'mailer', password: 's3cret', fromAddress: 'library@example.com', auth: true, startTls: false, ...extra });

describe('e-mail providers', () => {
  it('keeps the password to itself, makes the first provider the default, and lets an admin share one', async () => {
    const created = await call('POST', '/api/v1/email/providers', mailer.token, provider());
    expect(created.statusCode).toBe(200);
    expect(created.json()).toEqual({ id: expect.any(Number), userId: mailer.id, name: 'Local', host: '127.0.0.1', port: smtpPort, username: 'mailer', fromAddress: 'library@example.com', auth: true, startTls: false, defaultProvider: true, shared: false });
    expect(JSON.stringify((await call('GET', '/api/v1/email/providers', mailer.token)).json())).not.toContain('s3cret');

    expect((await call('POST', '/api/v1/email/providers', mailer.token, provider({ shared: true }))).statusCode).toBe(403);
    const shared = (await call('POST', '/api/v1/email/providers', admin, provider({ name: 'House', shared: true }))).json() as { id: number };
    const seen = (await call('GET', '/api/v1/email/providers', mailer.token)).json() as { name: string; shared: boolean }[];
    expect(seen.map((p) => p.name)).toEqual(['Local', 'House']);
    expect((await call('PUT', `/api/v1/email/providers/${shared.id}`, mailer.token, provider())).statusCode).toBe(403);
    expect((await call('GET', '/api/v1/email/providers', reader.token)).statusCode).toBe(403);
  });

  it('keeps the stored password when an update leaves it out, and 404s for someone else\'s provider', async () => {
    const [own] = (await call('GET', '/api/v1/email/providers', mailer.token)).json() as { id: number }[];
    const updated = await call('PUT', `/api/v1/email/providers/${own?.id}`, mailer.token, { ...provider(), password: null, name: 'Local SMTP' });
    expect(updated.json()).toMatchObject({ name: 'Local SMTP' });
    const row = await d.store.db.selectFrom('email_provider_v2').select('password').where('id', '=', own?.id as number).executeTakeFirstOrThrow();
    expect(row.password).toBe('s3cret');
    const adminOwn = (await call('POST', '/api/v1/email/providers', admin, provider({ name: 'Admin only' }))).json() as { id: number };
    expect((await call('GET', `/api/v1/email/providers/${adminOwn.id}`, mailer.token)).statusCode).toBe(404);
    expect((await call('POST', '/api/v1/email/providers', mailer.token, { name: 'no host', port: 25 })).statusCode).toBe(400);
  });
});

describe('e-mail recipients', () => {
  it('keeps one default, refuses a duplicate address and a malformed one', async () => {
    const kindle = (await call('POST', '/api/v1/email/recipients', mailer.token, { email: 'reader@kindle.example', name: 'Kindle' })).json() as { id: number; defaultRecipient: boolean };
    expect(kindle.defaultRecipient).toBe(true);
    const friend = (await call('POST', '/api/v1/email/recipients', mailer.token, { email: 'friend@example.com', name: 'Friend' })).json() as { id: number; defaultRecipient: boolean };
    expect(friend.defaultRecipient).toBe(false);
    expect((await call('PATCH', `/api/v1/email/recipients/${friend.id}/set-default`, mailer.token)).statusCode).toBe(204);
    const list = (await call('GET', '/api/v1/email/recipients', mailer.token)).json() as { id: number; defaultRecipient: boolean }[];
    expect(list.filter((r) => r.defaultRecipient).map((r) => r.id)).toEqual([friend.id]);
    expect((await call('POST', '/api/v1/email/recipients', mailer.token, { email: 'friend@example.com', name: 'Again' })).statusCode).toBe(409);
    expect((await call('POST', '/api/v1/email/recipients', mailer.token, { email: 'not an address', name: 'X' })).statusCode).toBe(400);
    expect((await call('PATCH', `/api/v1/email/recipients/${kindle.id}/set-default`, mailer.token)).statusCode).toBe(204);
  });
});

describe('sending a book', () => {
  it('sends the book file as an attachment through the chosen provider, signed in', async () => {
    const [own] = (await call('GET', '/api/v1/email/providers', mailer.token)).json() as { id: number }[];
    const [kindle] = (await call('GET', '/api/v1/email/recipients', mailer.token)).json() as { id: number }[];
    const res = await call('POST', '/api/v1/email/book', mailer.token, { bookId, providerId: own?.id, recipientId: kindle?.id });
    expect(res.statusCode).toBe(204);
    await waitForMail(1);
    const mail = inbox[0] as Received;
    expect(mail.from).toBe('library@example.com');
    expect(mail.to).toEqual(['reader@kindle.example']);
    expect(mail.raw).toContain('Subject: Your Book from Bindery: Dune');
    expect(mail.raw).toMatch(/filename="?Dune\.epub"?/);
  });

  it('quick-sends to the defaults, and says so when there are none', async () => {
    expect((await call('POST', `/api/v1/email/book/${bookId}`, mailer.token)).statusCode).toBe(204);
    await waitForMail(2);
    expect(inbox[1]?.to).toEqual(['reader@kindle.example']);
    const noDefaults = await d.createUser('nodefaults', { canEmailBook: true }, [1]);
    const res = await call('POST', `/api/v1/email/book/${bookId}`, noDefaults.token);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ message: 'No default email provider configured' });
  });

  it('refuses unknown providers and recipients, hidden books, and users without the permission', async () => {
    const [own] = (await call('GET', '/api/v1/email/providers', mailer.token)).json() as { id: number }[];
    const [kindle] = (await call('GET', '/api/v1/email/recipients', mailer.token)).json() as { id: number }[];
    expect((await call('POST', '/api/v1/email/book', mailer.token, { bookId, providerId: 999, recipientId: kindle?.id })).statusCode).toBe(404);
    expect((await call('POST', '/api/v1/email/book', mailer.token, { bookId, providerId: own?.id, recipientId: 999 })).statusCode).toBe(404);
    expect((await call('POST', '/api/v1/email/book', mailer.token, { bookId: 999, providerId: own?.id, recipientId: kindle?.id })).statusCode).toBe(404);
    const outsider = await d.createUser('outsider', { canEmailBook: true }, []);
    expect((await call('POST', `/api/v1/email/book/${bookId}`, outsider.token)).statusCode).toBe(403);
    expect((await call('POST', `/api/v1/email/book/${bookId}`, reader.token)).statusCode).toBe(403);
    expect(inbox.length).toBe(2);
  });
});

// MagicShelfController over HTTP on a real catalog: create, read, update, delete, ownership and public shelves, and
// rule JSON checked on save (a malformed one is a 400 and is never stored); a saved shelf is what the evaluator runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InjectOptions } from 'fastify';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';

let d: TestDaemon;
let admin: { id: number; token: string };
let alice: { id: number; token: string };
let bob: { id: number; token: string };

const call = (token: string, options: InjectOptions) => d.inject({ ...options, headers: { ...(options.headers ?? {}), authorization: `Bearer ${token}` } });
const save = (token: string, body: unknown) => call(token, { method: 'POST', url: '/api/magic-shelves', payload: body as Record<string, unknown> });
const rules = (...list: unknown[]): string => JSON.stringify({ name: 'g', type: 'group', join: 'and', rules: list });
const byAuthor = (name: string): string => rules({ type: 'rule', field: 'authors', operator: 'includes_any', value: [name] });
const shelfCount = async (): Promise<number> => Number((await d.store.db.selectFrom('magic_shelf').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

beforeAll(async () => {
  d = await startTestDaemon();
  admin = await d.createUser('admin', { admin: true });
  const library = await seedLibrary(d.store.db, d.dir, 'Books');
  alice = await d.createUser('alice', {}, [library]);
  bob = await d.createUser('bob', {}, [library]);
  await seedBook(d.store.db, library, { title: 'Dune', authors: ['Frank Herbert'] });
  await seedBook(d.store.db, library, { title: 'Children of Dune', authors: ['Frank Herbert'] });
  await seedBook(d.store.db, library, { title: 'Emma', authors: ['Jane Austen'] });
});

afterAll(async () => {
  await d?.close();
});

describe('creating and reading', () => {
  it('creates a shelf for the caller and answers Grimmory’s MagicShelf', async () => {
    const res = await save(alice.token, { name: 'Herbert', icon: 'book', iconType: 'LUCIDE', filterJson: byAuthor('Frank Herbert'), isPublic: false });
    expect(res.statusCode).toBe(200);
    const shelf = res.json() as { id: number };
    expect(shelf).toEqual({ id: expect.any(Number), name: 'Herbert', icon: 'book', iconType: 'LUCIDE', filterJson: byAuthor('Frank Herbert'), isPublic: false });
    const row = await d.store.db.selectFrom('magic_shelf').selectAll().where('id', '=', shelf.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ user_id: alice.id, name: 'Herbert', filter_json: byAuthor('Frank Herbert'), is_public: 0 });

    const read = await call(alice.token, { method: 'GET', url: `/api/magic-shelves/${shelf.id}` });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(shelf);
    const list = (await call(alice.token, { method: 'GET', url: '/api/magic-shelves' })).json() as { id: number }[];
    expect(list.map((s) => s.id)).toContain(shelf.id);
  });

  it('is the rule set the shared evaluator runs (app API books of the shelf)', async () => {
    const res = await save(admin.token, { name: 'Austen', filterJson: byAuthor('jane austen') });
    expect(res.statusCode).toBe(200);
    const { id } = res.json() as { id: number };
    const books = await call(admin.token, { method: 'GET', url: `/api/v1/app/shelves/magic/${id}/books` });
    expect(books.statusCode).toBe(200);
    expect((books.json() as { content: { title: string }[] }).content.map((b) => b.title)).toEqual(['Emma']);
  });

  it('refuses a second shelf of the same name for the same user, whatever the case; another user may use it', async () => {
    await save(alice.token, { name: 'Twice', filterJson: byAuthor('x') });
    const again = await save(alice.token, { name: 'TWICE', filterJson: byAuthor('x') });
    expect(again.statusCode).toBe(400);
    expect(again.json()).toMatchObject({ status: 400, message: 'A shelf with the same name already exists for this user.' });
    expect((await save(bob.token, { name: 'Twice', filterJson: byAuthor('x') })).statusCode).toBe(200);
  });

  it('answers 400 "Shelf not found" for an unknown id, as Grimmory does', async () => {
    const res = await call(alice.token, { method: 'GET', url: '/api/magic-shelves/999999' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ status: 400, message: 'Shelf not found' });
  });
});

describe('updating', () => {
  it('replaces name, icon, rules of the caller’s own shelf', async () => {
    const { id } = (await save(alice.token, { name: 'Before', filterJson: byAuthor('a') })).json() as { id: number };
    const res = await save(alice.token, { id, name: 'After', icon: 'star', iconType: 'CUSTOM_SVG', filterJson: byAuthor('b'), isPublic: null });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ id, name: 'After', icon: 'star', iconType: 'CUSTOM_SVG', filterJson: byAuthor('b'), isPublic: false });
    const row = await d.store.db.selectFrom('magic_shelf').select(['created_at', 'updated_at']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.updated_at! >= row.created_at!).toBe(true);
  });

  it('refuses a rename onto another shelf of the caller (data conflict)', async () => {
    await save(alice.token, { name: 'Taken', filterJson: byAuthor('a') });
    const { id } = (await save(alice.token, { name: 'Free', filterJson: byAuthor('a') })).json() as { id: number };
    const res = await save(alice.token, { id, name: 'taken', filterJson: byAuthor('a') });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ message: 'A data conflict occurred. The operation could not be completed.' });
  });

  it('refuses someone else’s shelf (403) and an unknown id (400)', async () => {
    const { id } = (await save(alice.token, { name: 'Mine', filterJson: byAuthor('a') })).json() as { id: number };
    const res = await save(bob.token, { id, name: 'Stolen', filterJson: byAuthor('a') });
    expect(res.statusCode).toBe(403);
    expect((await d.store.db.selectFrom('magic_shelf').select('name').where('id', '=', id).executeTakeFirstOrThrow()).name).toBe('Mine');
    expect((await save(bob.token, { id: 999999, name: 'Ghost', filterJson: byAuthor('a') })).statusCode).toBe(400);
  });
});

describe('public shelves', () => {
  it('only an administrator makes a shelf public; everyone then reads it, nobody else changes it', async () => {
    const refused = await save(alice.token, { name: 'For all', filterJson: byAuthor('a'), isPublic: true });
    expect(refused.statusCode).toBe(403);
    const { id } = (await save(admin.token, { name: 'Staff picks', filterJson: byAuthor('a'), isPublic: true })).json() as { id: number };
    const read = await call(bob.token, { method: 'GET', url: `/api/magic-shelves/${id}` });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toMatchObject({ name: 'Staff picks', isPublic: true });
    expect(((await call(bob.token, { method: 'GET', url: '/api/magic-shelves' })).json() as { id: number }[]).map((s) => s.id)).toContain(id);
    expect((await save(bob.token, { id, name: 'Mine now', filterJson: byAuthor('a'), isPublic: true })).statusCode).toBe(403);
    expect((await call(bob.token, { method: 'DELETE', url: `/api/magic-shelves/${id}` })).statusCode).toBe(403);
  });

  it('a non-administrator owner of a public shelf may not change it (Grimmory’s rule)', async () => {
    const row = await d.store.db.insertInto('magic_shelf').values({ user_id: alice.id, name: 'Old public', filter_json: byAuthor('a'), is_public: 1 }).returning('id').executeTakeFirstOrThrow();
    const res = await save(alice.token, { id: row.id, name: 'Old public', filterJson: byAuthor('b'), isPublic: false });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ message: 'You are not authorized to update a public shelf' });
  });

  it('a private shelf is not readable by another user (403), but is by an administrator', async () => {
    const { id } = (await save(alice.token, { name: 'Secret', filterJson: byAuthor('a') })).json() as { id: number };
    expect((await call(bob.token, { method: 'GET', url: `/api/magic-shelves/${id}` })).statusCode).toBe(403);
    expect((await call(admin.token, { method: 'GET', url: `/api/magic-shelves/${id}` })).statusCode).toBe(200);
    expect(((await call(bob.token, { method: 'GET', url: '/api/magic-shelves' })).json() as { id: number }[]).map((s) => s.id)).not.toContain(id);
  });
});

describe('deleting', () => {
  it('deletes the caller’s own shelf (204); then it is gone', async () => {
    const { id } = (await save(alice.token, { name: 'Short-lived', filterJson: byAuthor('a') })).json() as { id: number };
    const del = await call(alice.token, { method: 'DELETE', url: `/api/magic-shelves/${id}` });
    expect(del.statusCode).toBe(204);
    expect(del.body).toBe('');
    expect((await call(alice.token, { method: 'GET', url: `/api/magic-shelves/${id}` })).statusCode).toBe(400);
    const again = await call(alice.token, { method: 'DELETE', url: `/api/magic-shelves/${id}` });
    expect(again.statusCode).toBe(400);
    expect(again.json()).toMatchObject({ message: 'Shelf not found' });
  });

  it('never deletes another user’s shelf', async () => {
    const { id } = (await save(alice.token, { name: 'Keep me', filterJson: byAuthor('a') })).json() as { id: number };
    expect((await call(bob.token, { method: 'DELETE', url: `/api/magic-shelves/${id}` })).statusCode).toBe(403);
    expect((await call(admin.token, { method: 'DELETE', url: `/api/magic-shelves/${id}` })).statusCode).toBe(403);
    expect(await d.store.db.selectFrom('magic_shelf').select('id').where('id', '=', id).executeTakeFirst()).toBeDefined();
  });
});

describe('rule JSON checked on save', () => {
  const deep = (levels: number): string => {
    let group: Record<string, unknown> = { type: 'group', join: 'and', rules: [{ field: 'title', operator: 'contains', value: 'x' }] };
    for (let i = 0; i < levels; i++) group = { type: 'group', join: 'or', rules: [group] };
    return JSON.stringify(group);
  };
  const bad: [string, string, string][] = [
    ['not JSON', '{"type":"group",', 'filterJson: is not valid JSON'],
    ['a list, not a group', '[1,2]', 'filterJson: must be a rule group object'],
    ['a root that is not a group', '{"type":"rule","field":"title"}', "filterJson: $.type: must be 'group'"],
    ['an unknown join', '{"type":"group","join":"xor","rules":[]}', "filterJson: $.join: must be 'and' or 'or'"],
    ['rules that are not a list', '{"type":"group","rules":{"field":"title"}}', 'filterJson: $.rules: must be a list'],
    ['a rule that is not an object', rules('title'), 'filterJson: $.rules[0]: must be a rule or a group object'],
    ['an unknown field', rules({ field: 'password', operator: 'equals', value: 'x' }), "filterJson: $.rules[0].field: unknown field 'password'"],
    ['an unknown operator', rules({ field: 'title', operator: 'sounds_like', value: 'x' }), "filterJson: $.rules[0].operator: unknown operator 'sounds_like'"],
    ['an object value', rules({ field: 'title', operator: 'equals', value: { $ne: 1 } }), 'filterJson: $.rules[0].value: must be text, a number, a boolean or a list of those'],
    ['a nested list value', rules({ field: 'tags', operator: 'includes_any', value: [['a']] }), 'filterJson: $.rules[0].value[0]: must be text'],
    ['groups nested too deep', deep(40), 'filterJson: $.rules[0]'],
  ];

  it.each(bad)('refuses %s with a 400 in the documented shape, storing nothing', async (_what, filterJson, detail) => {
    const before = await shelfCount();
    const res = await save(alice.token, { name: `Bad ${_what}`, filterJson });
    expect(res.statusCode).toBe(400);
    const body = res.json() as { status: number; message: string; timestamp: string; details: string[] };
    expect(body).toMatchObject({ status: 400, message: 'Validation error', timestamp: expect.any(String) });
    expect(body.details.some((d) => d.startsWith(detail))).toBe(true);
    expect(await shelfCount()).toBe(before);
  });

  it('refuses bad rules on update too, leaving the stored shelf as it was', async () => {
    const { id } = (await save(alice.token, { name: 'Stable', filterJson: byAuthor('a') })).json() as { id: number };
    const res = await save(alice.token, { id, name: 'Stable', filterJson: rules({ field: 'nope', operator: 'equals' }) });
    expect(res.statusCode).toBe(400);
    expect((await d.store.db.selectFrom('magic_shelf').select('filter_json').where('id', '=', id).executeTakeFirstOrThrow()).filter_json).toBe(byAuthor('a'));
  });

  it('refuses bodies that break MagicShelf’s constraints: blank name, short or missing filterJson, bad iconType', async () => {
    const before = await shelfCount();
    for (const body of [
      { name: '   ', filterJson: byAuthor('a') },
      { name: 'x'.repeat(256), filterJson: byAuthor('a') },
      { name: 'Short', filterJson: '{' },
      { name: 'Missing' },
      { name: 'Icon', filterJson: byAuthor('a'), iconType: 'PRIME_NG' },
      { name: 'Icon', filterJson: byAuthor('a'), icon: 'i'.repeat(65) },
    ]) {
      const res = await save(alice.token, body);
      expect(res.statusCode, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.json()).toMatchObject({ status: 400, message: 'Validation error' });
    }
    const junk = await call(alice.token, { method: 'POST', url: '/api/magic-shelves', headers: { 'content-type': 'application/json' }, payload: '{"name":' });
    expect(junk.statusCode).toBe(400);
    expect(await shelfCount()).toBe(before);
  });

  it('accepts what the web UI saves: half-filled rules, nested groups, every operator, dates and lists', async () => {
    const filterJson = rules(
      { type: 'rule', field: '', operator: '' },
      { type: 'rule', field: 'title' },
      { type: 'group', join: 'or', rules: [{ field: 'addedOn', operator: 'within_last', value: 3, valueEnd: 'months' }, { field: 'publishedDate', operator: 'in_between', valueStart: '2001-01-01', valueEnd: '2002-12-31' }] },
      { field: 'readStatus', operator: 'excludes_all', value: ['READ', 'UNSET'] },
      { field: 'isPhysical', operator: 'equals', value: false },
      { field: 'seriesStatus', operator: 'equals', value: 'not_started' },
    );
    const res = await save(alice.token, { name: 'UI built', filterJson });
    expect(res.statusCode).toBe(200);
    expect((res.json() as { filterJson: string }).filterJson).toBe(filterJson);
  });
});

// Walks the whole route table (src/daemon/routes/index.ts), so routes added later are covered without touching this
// file: anonymous callers get 401 on authenticated routes, a user without the rule's flags gets 403, a user without
// the book's library gets 403 on book reads and downloads, and the table itself is well-formed. Routes that
// legitimately do not fit a rule are listed below with the reason.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InjectOptions } from 'fastify';
import { PERMISSION_NAMES, type Permissions } from '../../src/core/auth/permissions.ts';
import { createLibrary } from '../../src/core/libraries/libraries.ts';
import { scanLibrary } from '../../src/core/scan/scanner.ts';
import { buildApp, fastifyPath } from '../../src/daemon/app.ts';
import type { RouteSpec } from '../../src/daemon/route-spec.ts';
import { allRoutes } from '../../src/daemon/routes/index.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

const ROUTES = await allRoutes();
const label = (spec: RouteSpec): string => `${String(spec.method)} ${spec.url}`;

/**
 * Book routes Grimmory does not guard with `bookAccess` (endpoints.md lists no access check for them): they return
 * the caller's own data keyed by a book id, or nothing that belongs to the book's library.
 */
const NO_BOOK_ACCESS_CHECK: Record<string, string> = {
  'GET /api/v1/authors/book/{bookId}': 'AuthorController.getAuthorsByBookId has no bookAccess check in Grimmory',
  'GET /api/v1/annotations/book/{bookId}': "the caller's own annotations; no bookAccess check in Grimmory",
  'GET /api/v1/bookmarks/book/{bookId}': "the caller's own bookmarks; no bookAccess check in Grimmory",
  'GET /api/v1/book-notes/book/{bookId}': "the caller's own notes; no bookAccess check in Grimmory",
  'GET /api/v2/book-notes/book/{bookId}': "the caller's own notes; no bookAccess check in Grimmory",
  'GET /api/v1/reviews/book/{bookId}': 'reviews come from metadata providers; no bookAccess check in Grimmory',
  'GET /api/v1/reading-sessions/book/{bookId}': "the caller's own sessions; no bookAccess check in Grimmory",
  'GET /api/v1/app/books/{bookId}': 'app API: visibility is applied by the service (no bookAccess annotation in Grimmory)',
  'GET /api/v1/app/books/{bookId}/progress': "app API: the caller's own progress",
  'GET /api/v1/app/notebook/books/{bookId}/entries': "app API: the caller's own notebook",
};

/** Routes whose path parameters are validated by their handler rather than a params schema (none so far). */
const NO_PARAMS_SCHEMA: Record<string, string> = {};

type Kind = 'book' | 'file' | 'library' | 'user' | 'shelf' | 'author' | 'other';

function pathParams(url: string): string[] {
  return [...url.matchAll(/\{\*?([^}]+)\}/g)].map((m) => m[1] as string);
}

/** What a path parameter names, from its own name or the segment before it (`/books/{id}` is a book). */
function kindOf(url: string, name: string): Kind {
  const segments = url.split('/');
  const before = segments[segments.findIndex((s) => s === `{${name}}`) - 1] ?? '';
  const by = (names: RegExp, collections: RegExp): boolean => names.test(name) || (name === 'id' && collections.test(before));
  if (by(/^(book|targetBook)Id$/, /^(books?|cbx|epub|pdf|audiobooks)$/)) return 'book';
  if (by(/^(book)?FileId$/i, /^files$/)) return 'file';
  if (by(/^libraryId$/, /^libraries$/)) return 'library';
  if (by(/^userId$/, /^users$/)) return 'user';
  if (by(/^shelfId$/, /^shelves$/)) return 'shelf';
  if (by(/^authorId$/, /^authors$/)) return 'author';
  return 'other';
}

const isBookRoute = (spec: RouteSpec): boolean => pathParams(spec.url).some((p) => kindOf(spec.url, p) === 'book');

let d: TestDaemon;
let lib: TempLibrary;
const ids: Record<Kind, number> = { book: 0, file: 0, library: 0, user: 0, shelf: 0, author: 0, other: 1 };
let nobody: string;
let reader: string;
let outsider: string;

function urlFor(spec: RouteSpec, query: Record<string, string> = {}): string {
  let url = spec.url;
  for (const name of pathParams(spec.url)) {
    const value = url.includes(`{*${name}}`) ? 'OEBPS/ch1.xhtml' : String(ids[kindOf(spec.url, name)]);
    url = url.replace(`{*${name}}`, value).replace(`{${name}}`, value);
  }
  const qs = new URLSearchParams(query).toString();
  return qs ? `${url}?${qs}` : url;
}

interface ObjectSchema {
  properties?: Record<string, { type?: string; enum?: unknown[]; anyOf?: { const?: unknown }[]; const?: unknown; default?: unknown }>;
  required?: string[];
}

/** Values for the required query parameters of a route, from its querystring schema. */
function requiredQuery(spec: RouteSpec): Record<string, string> {
  const schema = spec.schema?.querystring as ObjectSchema | undefined;
  const out: Record<string, string> = {};
  for (const name of schema?.required ?? []) {
    const prop = schema?.properties?.[name] ?? {};
    if (/bookFileId|fileId/i.test(name)) out[name] = String(ids.file);
    else if (/bookId/i.test(name)) out[name] = String(ids.book);
    else if (/libraryId/i.test(name)) out[name] = String(ids.library);
    else if (prop.default !== undefined) out[name] = String(prop.default);
    else if (prop.const !== undefined) out[name] = String(prop.const);
    else if (prop.enum?.length) out[name] = String(prop.enum[0]);
    else if (prop.anyOf?.[0]?.const !== undefined) out[name] = String(prop.anyOf[0].const);
    else if (prop.type === 'integer' || prop.type === 'number') out[name] = '1';
    else if (prop.type === 'boolean') out[name] = 'false';
    else out[name] = 'x';
  }
  return out;
}

/** A value no declared query parameter accepts (numbers, enums, booleans, bounded strings alike). */
function junkQuery(spec: RouteSpec): Record<string, string> {
  const schema = spec.schema?.querystring as ObjectSchema | undefined;
  return Object.fromEntries(Object.keys(schema?.properties ?? {}).filter((name) => name !== 'token').map((name) => [name, '%%-not-a-value-'.repeat(40)]));
}

const bearer = (token: string): InjectOptions['headers'] => ({ authorization: `Bearer ${token}` });
const noFlags = (): Permissions => Object.fromEntries(PERMISSION_NAMES.map((p) => [p, false])) as Permissions;
const everyFlagButAdmin = (): Permissions => Object.fromEntries(PERMISSION_NAMES.map((p) => [p, p !== 'admin' && p !== 'demoUser'])) as Permissions;

beforeAll(async () => {
  d = await startTestDaemon();
  lib = makeTempLibrary();
  await writeSimpleEpub(lib.path('Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'], cover: '#2a6' });
  const library = await createLibrary(d.store.db, { name: 'Main', paths: [lib.root] });
  await scanLibrary(d.store, library, { coversRoot: d.ctx.paths.covers, workers: 0 });
  const file = await d.store.db.selectFrom('book_file').select(['id', 'book_id']).executeTakeFirstOrThrow();
  const admin = await d.createUser('admin', { ...everyFlagButAdmin(), admin: true }, [library.id]);
  const author = await d.store.db.selectFrom('author').select('id').executeTakeFirstOrThrow();
  const shelf =
    (await d.store.db.selectFrom('shelf').select('id').where('user_id', '=', admin.id).executeTakeFirst()) ??
    (await d.store.db.insertInto('shelf').values({ user_id: admin.id, name: 'Admin shelf', sort: null, icon: null, icon_type: null }).returning('id').executeTakeFirstOrThrow());
  Object.assign(ids, { book: file.book_id, file: file.id, library: library.id, user: admin.id, shelf: shelf.id, author: author.id });
  // No flag at all, but the library: a 403 for them is the route's rule.
  nobody = (await d.createUser('nobody', noFlags(), [library.id])).token;
  // Every flag but admin, and the library: book routes must not refuse them.
  reader = (await d.createUser('reader', everyFlagButAdmin(), [library.id])).token;
  // Every flag but admin, and no library: a 403 for them is the book's library.
  outsider = (await d.createUser('outsider', everyFlagButAdmin(), [])).token;
}, 120_000);

afterAll(async () => {
  await d?.close();
  lib?.cleanup();
});

describe('the route table', () => {
  it('is not empty and every route builds and compiles its schemas', async () => {
    expect(ROUTES.length).toBeGreaterThan(10);
    const eager = await buildApp({ config: d.config, store: d.store, lazySchemas: false });
    await expect(eager.app.ready()).resolves.toBeDefined();
    await eager.app.close();
  });

  it('has no two routes with the same method and path shape', () => {
    const seen = new Map<string, string>();
    const clashes: string[] = [];
    for (const spec of ROUTES) {
      for (const method of [spec.method].flat()) {
        const key = `${method} ${fastifyPath(spec.url).replace(/:[^/]+/g, ':')}`;
        if (seen.has(key)) clashes.push(`${label(spec)} clashes with ${seen.get(key)}`);
        else seen.set(key, label(spec));
      }
    }
    expect(clashes).toEqual([]);
  });

  it.each(ROUTES.filter((spec) => pathParams(spec.url).length > 0 && !(label(spec) in NO_PARAMS_SCHEMA)).map((spec) => [label(spec), spec] as const))(
    'declares a params schema naming every path parameter: %s',
    (_name, spec) => {
      const params = spec.schema?.params as ObjectSchema | undefined;
      expect(params, 'schema.params').toBeDefined();
      for (const name of pathParams(spec.url)) {
        const declared = Object.keys(params?.properties ?? {});
        expect(declared.includes(name) || (spec.url.includes(`{*${name}}`) && declared.includes('*')), `${name} in schema.params`).toBe(true);
      }
    },
  );
});

describe('anonymous callers', () => {
  const authenticated = ROUTES.filter((spec) => spec.auth === 'jwt' || spec.auth === 'jwt-or-query');

  it.each(authenticated.map((spec) => [label(spec), spec] as const))('get 401 before anything else is looked at: %s', async (_name, spec) => {
    for (const method of [spec.method].flat()) {
      const url = urlFor(spec);
      const anonymous = await d.inject({ method: method as 'GET', url });
      expect(anonymous.statusCode, `${method} ${url} without credentials`).toBe(401);
      expect(anonymous.json()).toEqual({ timestamp: expect.any(String), status: 401, error: 'Unauthorized', path: url.split('?')[0] });
      // A body that would not validate must not turn the 401 into a 400.
      if (method !== 'GET' && method !== 'HEAD' && method !== 'DELETE') {
        const junk = await d.inject({ method: method as 'POST', url, headers: { 'content-type': 'application/json' }, payload: '{"not":' });
        expect(junk.statusCode, `${method} ${url} with a malformed body`).toBe(401);
      }
      const forged = await d.inject({ method: method as 'GET', url, headers: bearer('not-a-token') });
      expect(forged.statusCode, `${method} ${url} with a forged bearer`).toBe(401);
      const queryToken = await d.inject({ method: method as 'GET', url: `${url}${url.includes('?') ? '&' : '?'}token=not-a-token` });
      expect(queryToken.statusCode, `${method} ${url} with a forged ?token=`).toBe(401);
    }
  });
});

describe('users without the flags a rule asks for', () => {
  const ruled = ROUTES.filter((spec) => spec.auth !== 'public' && spec.auth !== 'custom' && spec.rule !== undefined && spec.rule !== 'any');

  // The permission is checked before the query or body is looked at: a caller without it learns nothing from a 400.
  it.each(ruled.map((spec) => [label(spec), spec] as const))('get 403 Access denied before validation: %s', async (_name, spec) => {
    const rule = spec.rule as Exclude<RouteSpec['rule'], 'any' | undefined>;
    // For "self or flag" rules, the parameter names someone else (the admin).
    const query = 'param' in rule && !spec.url.includes(`{${rule.param}}`) ? { [rule.param]: String(ids.user) } : {};
    for (const method of [spec.method].flat()) {
      const valid = await d.inject({ method: method as 'GET', url: urlFor(spec, query), headers: bearer(nobody) });
      expect(valid.statusCode, `${method} ${urlFor(spec, query)}`).toBe(403);
      expect(valid.json()).toEqual({ status: 403, message: 'Access denied.', timestamp: expect.any(String) });
      const url = urlFor(spec, { ...junkQuery(spec), ...query });
      const hasBody = method !== 'GET' && method !== 'HEAD' && method !== 'DELETE';
      const junk = await d.inject({ method: method as 'POST', url, headers: { ...bearer(nobody), ...(hasBody ? { 'content-type': 'application/json' } : {}) }, ...(hasBody ? { payload: '{"not":' } : {}) });
      expect(junk.statusCode, `${method} ${url}${hasBody ? ' with a malformed body' : ''}`).toBe(403);
      expect(junk.json()).toEqual({ status: 403, message: 'Access denied.', timestamp: expect.any(String) });
    }
  });

  it('include at least the admin-only user routes (the walk sees the table)', () => {
    expect(ruled.length).toBeGreaterThan(0);
  });
});

describe('users without the book’s library', () => {
  const bookReads = ROUTES.filter(
    (spec) => [spec.method].flat().includes('GET') && spec.auth !== 'public' && spec.auth !== 'custom' && isBookRoute(spec) && !(label(spec) in NO_BOOK_ACCESS_CHECK),
  );

  it.each(bookReads.map((spec) => [label(spec), spec] as const))('get 403 on book reads and downloads: %s', async (_name, spec) => {
    const url = urlFor(spec, requiredQuery(spec));
    const allowed = await d.inject({ method: 'GET', url, headers: bearer(reader) });
    expect([401, 403], `${url} for a reader of the library (${allowed.statusCode}: ${allowed.body.slice(0, 200)})`).not.toContain(allowed.statusCode);
    const hidden = await d.inject({ method: 'GET', url, headers: bearer(outsider) });
    expect(hidden.statusCode, `${url} for a user without the library (${hidden.body.slice(0, 200)})`).toBe(403);
    expect(hidden.json()).toMatchObject({ status: 403, message: expect.any(String) });
    const viaQuery = await d.inject({ method: 'GET', url: `${url}${url.includes('?') ? '&' : '?'}token=${outsider}` });
    if (spec.auth === 'jwt-or-query') expect(viaQuery.statusCode, `${url} with ?token= of a user without the library`).toBe(403);
  });

  it('cover the book routes the table has', () => {
    expect(bookReads.length).toBeGreaterThan(0);
  });
});

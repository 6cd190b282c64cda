// Metadata over real HTTP with providers pointed at a fake server: a refresh started through /api/v1/tasks/start that
// leaves proposals, reviewed through /api/metadata/tasks (ACCEPTED merges, REJECTED does not); a refresh that applies
// at once; the task manager routes; prospective metadata as server-sent events; ISBN lookup; provider details.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.ts';

type Json = Record<string, unknown>;

let d: TestDaemon;
let site: FakeSite;
let admin: string;
let libraryId: number;

const volume = (id: string, title: string, isbn: string, extra: Json = {}) => ({
  kind: 'books#volume',
  id,
  volumeInfo: { title, authors: ['Frank Herbert'], publisher: 'Ace', description: `About ${title}.`, industryIdentifiers: [{ type: 'ISBN_13', identifier: isbn }], pageCount: 500, language: 'en', categories: ['Fiction'], ...extra },
});
const VOLUMES: Record<string, Json> = {
  '9780441013593': volume('vol-dune', 'Dune', '9780441013593'),
  '9780441172696': volume('vol-messiah', 'Dune Messiah', '9780441172696'),
};

const call = (method: 'GET' | 'POST' | 'DELETE' | 'PATCH' | 'PUT', url: string, payload?: unknown, token = admin) =>
  d.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload !== undefined ? { payload: payload as object } : {}) });

const fp = (p1: string | null) => ({ p1, p2: null, p3: null, p4: null });
const GOOGLE_FIRST = { title: fp('Google'), description: fp('Google'), publisher: fp('Google'), pageCount: fp('Google'), categories: fp('Google'), authors: fp('Google') };

async function waitFor<T>(what: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await what();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function finishedTask(taskId: string): Promise<Json> {
  return waitFor(async () => {
    const res = await call('GET', `/api/metadata/tasks/${taskId}`);
    const task = res.statusCode === 200 ? ((res.json() as Json).task as Json) : undefined;
    return task && task.status !== 'IN_PROGRESS' ? task : undefined;
  });
}

const meta = (bookId: number) => d.store.db.selectFrom('book_metadata').selectAll().where('book_id', '=', bookId).executeTakeFirstOrThrow();

async function bookWithIsbn(title: string, isbn: string): Promise<number> {
  const { bookId } = await seedBook(d.store.db, libraryId, { title, authors: ['Frank Herbert'] });
  await d.store.db.updateTable('book_metadata').set({ isbn_13: isbn }).where('book_id', '=', bookId).execute();
  return bookId;
}

beforeAll(async () => {
  site = await startFakeSite();
  d = await startTestDaemon({ outgoingAllowPrivateHosts: '127.0.0.1', metadataProviderBaseUrls: JSON.stringify({ Google: site.url, OpenLibrary: site.url }) });
  admin = await d.setupAdmin();
  libraryId = await seedLibrary(d.store.db, d.dir, 'Books');
  const res = await call('PUT', '/api/v1/settings', [
    { name: 'METADATA_PROVIDER_SETTINGS', value: { google: { enabled: true, apiKey: null }, openLibrary: { enabled: true }, amazon: { enabled: false }, goodReads: { enabled: false } } },
    { name: 'QUICK_BOOK_MATCH', value: { replaceMode: 'REPLACE_MISSING', mergeCategories: true, fieldOptions: { ...GOOGLE_FIRST, title: { p1: 'Google', p2: 'OpenLibrary', p3: null, p4: null } }, enabledFields: {} } },
  ]);
  expect(res.statusCode).toBe(200);
}, 60_000);
afterAll(async () => {
  await d?.close();
  await site?.close();
});
beforeEach(() => {
  site.reset();
  site.on('GET', '/volumes', (r) => {
    const isbn = r.query.get('q')?.replace(/^isbn:/, '') ?? '';
    const hit = VOLUMES[isbn];
    return { json: hit ? { kind: 'books#volumes', totalItems: 1, items: [hit] } : { kind: 'books#volumes', totalItems: 0 } };
  });
  site.on('GET', /^\/volumes\/.+/, (r) => {
    const found = Object.values(VOLUMES).find((v) => r.path.endsWith(`/${v.id as string}`));
    return found ? { json: found } : { status: 404, json: { error: { code: 404, message: 'The volume ID could not be found.' } } };
  });
});

describe('a refresh with review', () => {
  it('leaves proposals; ACCEPTED merges one into its book, REJECTED leaves the other as it was', async () => {
    const dune = await bookWithIsbn('dune_scan_2005', '9780441013593');
    const messiah = await bookWithIsbn('messiah', '9780441172696');
    const start = await call('POST', '/api/v1/tasks/start', {
      taskType: 'REFRESH_METADATA_MANUAL',
      options: { refreshType: 'BOOKS', bookIds: [dune, messiah], refreshOptions: { reviewBeforeApply: true, replaceMode: 'REPLACE_WHEN_PROVIDED', mergeCategories: false, refreshCovers: false, fieldOptions: GOOGLE_FIRST, enabledFields: {} } },
    });
    expect(start.statusCode).toBe(202);
    const started = start.json() as { taskId: string; taskType: string; status: string };
    expect(started).toEqual({ taskId: expect.any(String), taskType: 'REFRESH_METADATA_MANUAL', status: 'ACCEPTED' });

    const task = await finishedTask(started.taskId);
    expect(task).toMatchObject({ id: started.taskId, status: 'COMPLETED', completed: 2, totalBooks: 2, startedAt: expect.stringMatching(/Z$/), initiatedBy: expect.any(Number) });
    const proposals = task.proposals as Json[];
    expect(proposals).toHaveLength(2);
    const forDune = proposals.find((p) => p.bookId === dune) as Json;
    expect(forDune).toMatchObject({ proposalId: expect.any(Number), taskId: started.taskId, status: 'FETCHED', reviewedAt: null, metadataJson: { bookId: dune, title: 'Dune', description: 'About Dune.', googleId: 'vol-dune' } });
    // Nothing is written before the review.
    expect((await meta(dune)).title).toBe('dune_scan_2005');

    const active = (await call('GET', '/api/metadata/tasks/active')).json() as Json[];
    expect(active).toContainEqual({ taskId: started.taskId, completed: 0, total: 2, message: 'Metadata fetch completed! 2 books need review.', status: 'COMPLETED', review: true });

    const forMessiah = proposals.find((p) => p.bookId === messiah) as Json;
    expect((await call('POST', `/api/metadata/tasks/${started.taskId}/proposals/${forDune.proposalId as number}/status?status=ACCEPTED`)).statusCode).toBe(200);
    expect((await call('POST', `/api/metadata/tasks/${started.taskId}/proposals/${forMessiah.proposalId as number}/status?status=rejected`)).statusCode).toBe(200);
    const merged = await meta(dune);
    expect([merged.title, merged.description, merged.google_id, merged.page_count]).toEqual(['Dune', 'About Dune.', 'vol-dune', 500]);
    expect((await meta(messiah)).title).toBe('messiah');
    const score = await d.store.db.selectFrom('book').select('metadata_match_score').where('id', '=', dune).executeTakeFirstOrThrow();
    expect(score.metadata_match_score).toBeGreaterThan(0);

    // Reviewed proposals leave the task's list; the active entry counts what was accepted.
    expect(((await call('GET', `/api/metadata/tasks/${started.taskId}`)).json() as { task: Json }).task.proposals).toEqual([]);
    expect((await call('GET', '/api/metadata/tasks/active')).json()).toContainEqual(expect.objectContaining({ taskId: started.taskId, completed: 1, total: 1 }));
    const reviewed = await d.store.db.selectFrom('metadata_fetch_proposals').select(['status', 'reviewer_user_id', 'reviewed_at']).where('task_id', '=', started.taskId).orderBy('proposal_id').execute();
    expect(reviewed.map((r) => r.status).sort()).toEqual(['ACCEPTED', 'REJECTED']);
    expect(reviewed.every((r) => r.reviewer_user_id !== null && r.reviewed_at !== null)).toBe(true);

    // Unknown proposals, statuses and tasks are 404s.
    expect((await call('POST', `/api/metadata/tasks/${started.taskId}/proposals/999999/status?status=ACCEPTED`)).statusCode).toBe(404);
    expect((await call('POST', `/api/metadata/tasks/other-task/proposals/${forDune.proposalId as number}/status?status=ACCEPTED`)).statusCode).toBe(404);
    expect((await call('POST', `/api/metadata/tasks/${started.taskId}/proposals/${forDune.proposalId as number}/status?status=MAYBE`)).statusCode).toBe(404);
    expect((await call('DELETE', `/api/metadata/tasks/${started.taskId}`)).statusCode).toBe(204);
    expect((await call('DELETE', `/api/metadata/tasks/${started.taskId}`)).statusCode).toBe(404);
    expect((await call('GET', `/api/metadata/tasks/${started.taskId}`)).statusCode).toBe(404);
    expect(await d.store.db.selectFrom('metadata_fetch_proposals').select('proposal_id').where('task_id', '=', started.taskId).execute()).toEqual([]);
  }, 30_000);

  it('does not overwrite a book the reviewer already saved before accepting', async () => {
    const dune = await bookWithIsbn('saved by the UI', '9780441013593');
    const start = await call('POST', '/api/v1/tasks/start', {
      taskType: 'REFRESH_METADATA_MANUAL',
      options: { refreshType: 'BOOKS', bookIds: [dune], refreshOptions: { reviewBeforeApply: true, replaceMode: 'REPLACE_ALL', fieldOptions: GOOGLE_FIRST, enabledFields: {} } },
    });
    const { taskId } = start.json() as { taskId: string };
    const task = await finishedTask(taskId);
    const [proposal] = task.proposals as Json[];
    // The web UI's review dialog saves the chosen metadata itself, then marks the proposal accepted.
    await d.store.db.updateTable('book').set({ metadata_updated_at: new Date(Date.now() + 1000).toISOString() }).where('id', '=', dune).execute();
    expect((await call('POST', `/api/metadata/tasks/${taskId}/proposals/${proposal?.proposalId as number}/status?status=ACCEPTED`)).statusCode).toBe(200);
    expect((await meta(dune)).title).toBe('saved by the UI');
  }, 30_000);
});

describe('a refresh without review', () => {
  it('merges at once with the default options and leaves nothing to review', async () => {
    const dune = await bookWithIsbn('dune_raw', '9780441013593');
    await d.store.db.updateTable('book_metadata').set({ description: 'My own words.' }).where('book_id', '=', dune).execute();
    const start = await call('POST', '/api/v1/tasks/start', { taskType: 'REFRESH_METADATA_MANUAL', options: { refreshType: 'BOOKS', bookIds: [dune] } });
    expect(start.statusCode).toBe(202);
    const { taskId } = start.json() as { taskId: string };
    const task = await finishedTask(taskId);
    expect(task.proposals).toEqual([]);
    const merged = await meta(dune);
    // QUICK_BOOK_MATCH here: REPLACE_MISSING — the title and description the book had stay.
    expect([merged.title, merged.description, merged.publisher, merged.page_count]).toEqual(['dune_raw', 'My own words.', 'Ace', 500]);
    expect((await call('GET', '/api/metadata/tasks/active')).json()).not.toContainEqual(expect.objectContaining({ taskId }));
  }, 30_000);

  it('refuses bulk refreshes without the bulk permission, and unknown libraries and refresh types', async () => {
    const a = await bookWithIsbn('a', '9780000000001');
    const b = await bookWithIsbn('b', '9780000000002');
    const manager = await d.createUser('manager', { canAccessTaskManager: true }, [libraryId]);
    const bulk = await call('POST', '/api/v1/tasks/start', { taskType: 'REFRESH_METADATA_MANUAL', options: { refreshType: 'BOOKS', bookIds: [a, b] } }, manager.token);
    expect(bulk.statusCode).toBe(403);
    expect(bulk.json()).toMatchObject({ status: 403, message: 'Permission denied: CAN_BULK_AUTO_FETCH_METADATA' });
    expect((await call('POST', '/api/v1/tasks/start', { taskType: 'REFRESH_METADATA_MANUAL', options: { refreshType: 'LIBRARY', libraryId: 424242 } })).statusCode).toBe(404);
    const bad = await call('POST', '/api/v1/tasks/start', { taskType: 'REFRESH_METADATA_MANUAL', options: { refreshType: 'SOME' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ message: 'The refresh type is invalid' });
    expect((await call('POST', '/api/v1/tasks/start', { options: {} })).statusCode).toBe(400);
  });
});

describe('the task manager', () => {
  it('lists the task types with their cron settings', async () => {
    const tasks = (await call('GET', '/api/v1/tasks')).json() as Json[];
    expect(tasks.map((t) => t.taskType)).toEqual(['REFRESH_LIBRARY_METADATA', 'UPDATE_BOOK_RECOMMENDATIONS', 'CLEANUP_DELETED_BOOKS', 'SYNC_LIBRARY_FILES', 'BOOKDROP_PERIODIC_SCANNING', 'CLEANUP_TEMP_METADATA', 'BACKUP']);
    expect(tasks[0]).toEqual({ taskType: 'REFRESH_LIBRARY_METADATA', name: 'Refresh Metadata', description: expect.any(String), parallel: false, async: true, cronSupported: false });
    expect(tasks.find((t) => t.taskType === 'CLEANUP_DELETED_BOOKS')?.cronConfig).toMatchObject({ taskType: 'CLEANUP_DELETED_BOOKS', cronExpression: '0 40 0 * * 1', enabled: true, createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+$/) });
    expect(tasks.find((t) => t.taskType === 'BOOKDROP_PERIODIC_SCANNING')?.cronConfig).toMatchObject({ enabled: false });
  });

  it('changes a cron setting and refuses a bad expression or a type without cron', async () => {
    const ok = await call('PATCH', '/api/v1/tasks/SYNC_LIBRARY_FILES/cron', { cronExpression: '0 15 2 * * *', enabled: false });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ taskType: 'SYNC_LIBRARY_FILES', cronExpression: '0 15 2 * * *', enabled: false, id: expect.any(Number) });
    expect((await call('PATCH', '/api/v1/tasks/SYNC_LIBRARY_FILES/cron', { enabled: true })).json()).toMatchObject({ cronExpression: '0 15 2 * * *', enabled: true });
    const five = await call('PATCH', '/api/v1/tasks/SYNC_LIBRARY_FILES/cron', { cronExpression: '15 2 * * *' });
    expect(five.statusCode).toBe(400);
    expect(five.json()).toMatchObject({ message: 'Invalid cron expression format. Expected 6 fields (second minute hour day month day-of-week)' });
    expect((await call('PATCH', '/api/v1/tasks/SYNC_LIBRARY_FILES/cron', { cronExpression: '0 99 2 * * *' })).statusCode).toBe(400);
    expect((await call('PATCH', '/api/v1/tasks/REFRESH_LIBRARY_METADATA/cron', { enabled: true })).json()).toMatchObject({ status: 400, message: 'Task type REFRESH_LIBRARY_METADATA does not support cron scheduling' });
    expect((await call('PATCH', '/api/v1/tasks/NOPE/cron', { enabled: true })).statusCode).toBe(400);
  });

  it('runs a library rescan in the background and shows it as the newest run of its type', async () => {
    const start = await call('POST', '/api/v1/tasks/start', { taskType: 'REFRESH_LIBRARY_METADATA', options: { updateMetadataFromFiles: true } });
    expect(start.statusCode).toBe(202);
    const { taskId } = start.json() as { taskId: string };
    const last = await waitFor(async () => {
      const histories = ((await call('GET', '/api/v1/tasks/last')).json() as { taskHistories: Json[] }).taskHistories;
      const mine = histories.find((h) => h.type === 'REFRESH_LIBRARY_METADATA');
      return mine?.status === 'COMPLETED' ? histories : undefined;
    });
    expect(last.find((h) => h.type === 'REFRESH_LIBRARY_METADATA')).toMatchObject({ id: taskId, status: 'COMPLETED', progressPercentage: 100, createdAt: expect.stringMatching(/Z$/), completedAt: expect.stringMatching(/Z$/) });
    expect(last.find((h) => h.type === 'CLEANUP_DELETED_BOOKS')).toEqual({ id: null, type: 'CLEANUP_DELETED_BOOKS', status: null, progressPercentage: null, message: null, createdAt: null, updatedAt: null, completedAt: null });
    expect(last.some((h) => h.type === 'REFRESH_METADATA_MANUAL')).toBe(false);
  });

  it('cancels only running tasks, and refuses task types it cannot run', async () => {
    const missing = await call('DELETE', '/api/v1/tasks/not-a-task/cancel');
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ message: 'Task not found or not running: not-a-task' });
    expect((await call('POST', '/api/v1/tasks/start', { taskType: 'UPDATE_BOOK_RECOMMENDATIONS' })).statusCode).toBe(400);
  });
});

describe('provider routes', () => {
  it('streams prospective metadata as server-sent events, one per candidate', async () => {
    const dune = await bookWithIsbn('dune', '9780441013593');
    site.on('GET', '/isbn/9780441013593.json', { json: { key: '/books/OL1M', title: 'Dune', publishers: ['Chilton'], isbn_13: ['9780441013593'] } });
    const res = await call('POST', `/api/v1/books/${dune}/metadata/prospective`, { providers: ['Google', 'OpenLibrary'], isbn: '9780441013593', title: 'Dune', author: 'Frank Herbert' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const events = res.body.split('\n\n').filter(Boolean).map((e) => {
      expect(e.startsWith('data:')).toBe(true);
      return JSON.parse(e.slice('data:'.length)) as Json;
    });
    expect(events.map((e) => e.provider).sort()).toEqual(['Google', 'OpenLibrary']);
    expect(events.find((e) => e.provider === 'Google')).toMatchObject({ title: 'Dune', googleId: 'vol-dune', isbn13: '9780441013593' });
    expect(events.every((e) => !('providerItemId' in e))).toBe(true);
    // Without a body: the book's own ISBN and title, and the title's providers in QUICK_BOOK_MATCH.
    const bare = await d.inject({ method: 'POST', url: `/api/v1/books/${dune}/metadata/prospective`, headers: { authorization: `Bearer ${admin}` } });
    expect(bare.statusCode).toBe(200);
    expect(bare.body).toContain('"googleId":"vol-dune"');
    expect((await call('POST', `/api/v1/books/${dune}/metadata/prospective`, { providers: ['Nope'] })).statusCode).toBe(400);
    expect((await call('POST', '/api/v1/books/999999/metadata/prospective', { providers: ['Google'] })).statusCode).toBe(404);
  });

  it('looks up an ISBN through the default providers', async () => {
    const res = await call('POST', '/api/v1/books/metadata/isbn-lookup', { isbn: '978-0-441-17269-6' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ provider: 'Google', title: 'Dune Messiah', isbn13: '9780441172696' });
    const none = await call('POST', '/api/v1/books/metadata/isbn-lookup', { isbn: '9780000000002' });
    expect(none.statusCode).toBe(404);
  });

  it('gives one item of a provider, and says clearly when the provider refuses', async () => {
    const res = await call('GET', '/api/v1/books/metadata/detail/Google/vol-dune');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ provider: 'Google', googleId: 'vol-dune', title: 'Dune' });
    expect((await call('GET', '/api/v1/books/metadata/detail/Google/unknown-volume')).statusCode).toBe(404);
    expect((await call('GET', '/api/v1/books/metadata/detail/Nope/1')).statusCode).toBe(400);
    site.reset();
    site.on('GET', /.*/, { status: 403, html: '<html>denied</html>' });
    const blocked = await call('GET', '/api/v1/books/metadata/detail/Google/vol-dune');
    expect(blocked.statusCode).toBe(502);
    expect(blocked.json()).toMatchObject({ status: 502, message: expect.stringMatching(/^Google Books: refused access \(HTTP 403\)/) });
    // Hardcover is switched off in this daemon's settings.
    const off = await call('GET', '/api/v1/books/metadata/detail/Hardcover/312460');
    expect(off.statusCode).toBe(400);
    expect(off.json()).toMatchObject({ message: 'Hardcover: is not enabled in the metadata provider settings' });
  });
});

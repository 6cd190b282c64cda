// The page cache's gate (src/daemon/page-cache.ts), driven step by step: which request builds a page, which waits, and
// when each is answered. The hooks are called as fastify calls them, with the builds finished by hand.
import type { FastifyReply } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openStore, type Store } from '../../src/core/store/store.ts';
import type { DaemonContext } from '../../src/daemon/context.ts';
import { answerFromPageCache, keepPage, pageCacheSize } from '../../src/daemon/page-cache.ts';
import type { RouteRequest } from '../../src/daemon/route-spec.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';

let temp: TempDir;
let store: Store;

beforeAll(async () => {
  temp = makeTempDir('bindery-page-builds-');
  store = await openStore(temp.file('catalog.sqlite'));
  // On PostgreSQL nothing is kept until the store listens for other processes' changes.
  await vi.waitFor(() => expect(store.generation()).toEqual(store.generation()));
});

afterAll(async () => {
  await store.close();
  temp.remove();
});

/** One request through the preHandler: `built` once it may build, `answer` once answered from the cache. */
function ask(ctx: DaemonContext, url: string) {
  const headers: Record<string, string> = {};
  const state = { building: false, answer: undefined as unknown };
  const request = { url, headers, principal: { userId: 1 }, raw: { destroyed: false }, ip: '127.0.0.1' } as unknown as RouteRequest;
  const reply = {
    statusCode: 200,
    raw: { destroyed: false },
    headers: () => reply,
    header: (name: string, value: string) => ((headers[name] = value), reply),
    getHeader: (name: string) => (name === 'content-type' ? 'application/json' : undefined),
    send: (value: unknown) => void (state.answer = value),
  } as unknown as FastifyReply;
  answerFromPageCache(request, reply, ctx, 'reading', () => void (state.building = true));
  return { state, finish: (body: string) => keepPage(request, reply, ctx, body) };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

/** A write to the catalog, once this process sees its generation move. */
async function changeCatalog(setting: string): Promise<void> {
  const before = store.generation();
  await store.write(async ({ exec }) => {
    await exec.run('INSERT INTO app_settings (name, val) VALUES (?, ?)', [setting, '1']);
  });
  await vi.waitFor(() => expect(store.generation()).not.toEqual(before));
}

describe('page builds', () => {
  it('answers a request for a page being built when that build ends, not after the builds queued before it', async () => {
    const ctx = { store } as DaemonContext;
    const a = ask(ctx, '/a');
    const b = ask(ctx, '/b');
    const c = ask(ctx, '/c');
    const d = ask(ctx, '/d');
    const again = ask(ctx, '/a');
    await settle();
    // Two slots: a and b build, c and d wait for a slot, the second /a waits for the first.
    expect([a.state.building, b.state.building, c.state.building, d.state.building, again.state.building]).toEqual([true, true, false, false, false]);
    a.finish('{"page":"a"}');
    await settle();
    expect(Buffer.from(again.state.answer as Buffer).toString()).toBe('{"page":"a"}');
    expect(again.state.building).toBe(false);
    expect([c.state.building, d.state.building]).toEqual([true, false]);
    b.finish('{"page":"b"}');
    c.finish('{"page":"c"}');
    await settle();
    expect(d.state.building).toBe(true);
    d.finish('{"page":"d"}');
    expect(pageCacheSize(ctx)).toMatchObject({ entries: 4, builds: 4 });
  });

  it("builds a feed's first page since a change alone; the feed's other pages wait for it, other feeds do not", async () => {
    const ctx = { store } as DaemonContext;
    const first = ask(ctx, '/feed?page=1');
    const second = ask(ctx, '/feed?page=2');
    const other = ask(ctx, '/other?page=1');
    await settle();
    expect([first.state.building, second.state.building, other.state.building]).toEqual([true, false, true]);
    first.finish('{"page":1}');
    await settle();
    expect(second.state.building).toBe(true);
    // Once a page of the feed is built, its pages build side by side.
    const third = ask(ctx, '/feed?page=3');
    await settle();
    expect(third.state.building).toBe(false);
    other.finish('{"other":1}');
    await settle();
    expect(third.state.building).toBe(true);
    second.finish('{"page":2}');
    third.finish('{"page":3}');
    // A change: the next first page of the feed is again built alone.
    await changeCatalog('page-builds-test');
    const afterChange = [ask(ctx, '/feed?page=4'), ask(ctx, '/feed?page=5')];
    await settle();
    expect(afterChange.map((a) => a.state.building)).toEqual([true, false]);
    afterChange[0]!.finish('{"page":4}');
    await settle();
    expect(afterChange[1]!.state.building).toBe(true);
    afterChange[1]!.finish('{"page":5}');
  });

  it("waits for one first build of a feed at most, even when the catalog changed while it ran", async () => {
    const ctx = { store } as DaemonContext;
    const first = ask(ctx, '/changing?page=1');
    const second = ask(ctx, '/changing?page=2');
    const third = ask(ctx, '/changing?page=3');
    await settle();
    expect([first.state.building, second.state.building, third.state.building]).toEqual([true, false, false]);
    await changeCatalog('page-builds-test-2');
    first.finish('{"page":1}');
    await settle();
    // Not one at a time behind a new first build: both take the two slots.
    expect([second.state.building, third.state.building]).toEqual([true, true]);
    second.finish('{"page":2}');
    third.finish('{"page":3}');
  });

  it('answers a kept page at once while both build slots are busy and builds are queued', async () => {
    const ctx = { store } as DaemonContext;
    const kept = ask(ctx, '/kept');
    await settle();
    kept.finish('{"kept":true}');
    const busy = [ask(ctx, '/busy-1'), ask(ctx, '/busy-2'), ask(ctx, '/busy-3')];
    await settle();
    expect(busy.map((b) => b.state.building)).toEqual([true, true, false]);
    const again = ask(ctx, '/kept');
    expect(Buffer.from(again.state.answer as Buffer).toString()).toBe('{"kept":true}');
    expect(again.state.building).toBe(false);
    for (const b of busy) {
      await settle();
      b.finish('{}');
    }
  });

  it('lets a waiting request build the page itself when the build it waited for kept nothing', async () => {
    const ctx = { store } as DaemonContext;
    const first = ask(ctx, '/e');
    const second = ask(ctx, '/e');
    await settle();
    expect([first.state.building, second.state.building]).toEqual([true, false]);
    // Not text: sent, never kept.
    first.finish(undefined as unknown as string);
    await settle();
    expect(second.state.answer).toBeUndefined();
    expect(second.state.building).toBe(true);
    second.finish('{"page":"e"}');
    expect(pageCacheSize(ctx).entries).toBe(1);
  });
});

// The kept lists of a feed's book ids: kept while the catalog is unchanged, within a budget of ids, for a while at most.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { idList, IdListMemo } from '../../src/core/opds/id-lists.ts';
import type { Generation, GenerationSource } from '../../src/core/store/snapshot.ts';

class Catalog implements GenerationSource {
  state: Generation = { dataVersion: 1, changes: 0 };
  writing = false;
  generation(): Generation {
    return { ...this.state };
  }
  writeInFlight(): boolean {
    return this.writing;
  }
}

function counted(ids: number[]): { load: () => Promise<ReturnType<typeof idList>>; loads: () => number } {
  let n = 0;
  return {
    load: async () => {
      n++;
      return idList(ids);
    },
    loads: () => n,
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('kept id lists', () => {
  it('stores ids compactly, as doubles only when one does not fit in 32 bits', () => {
    expect(idList([3, 1, 2])).toBeInstanceOf(Int32Array);
    expect([...idList([3, 1, 2])]).toEqual([3, 1, 2]);
    const big = idList([1, 2 ** 31, -(2 ** 31) - 1]);
    expect(big).toBeInstanceOf(Float64Array);
    expect([...big]).toEqual([1, 2 ** 31, -(2 ** 31) - 1]);
  });

  it('loads a list once while the catalog is unchanged, and again after any change', async () => {
    const catalog = new Catalog();
    const memo = new IdListMemo(100);
    const list = counted([5, 4, 3]);
    expect([...(await memo.get(catalog, 'a', list.load))]).toEqual([5, 4, 3]);
    await memo.get(catalog, 'a', list.load);
    expect(list.loads()).toBe(1);
    catalog.state = { ...catalog.state, changes: 1 };
    await memo.get(catalog, 'a', list.load);
    expect(list.loads()).toBe(2);
    catalog.state = { ...catalog.state, dataVersion: 2 };
    await memo.get(catalog, 'a', list.load);
    expect(list.loads()).toBe(3);
  });

  it('shares one load among the requests asking for a list while it loads, but not across a change', async () => {
    const catalog = new Catalog();
    const memo = new IdListMemo(100);
    const list = counted([7, 8]);
    const [a, b] = await Promise.all([memo.get(catalog, 'a', list.load), memo.get(catalog, 'a', list.load)]);
    expect(a).toBe(b);
    expect(list.loads()).toBe(1);
    expect(memo.size).toEqual({ lists: 1, ids: 2 });
    catalog.state = { ...catalog.state, changes: 1 };
    const before = memo.get(catalog, 'a', list.load);
    catalog.state = { ...catalog.state, changes: 2 };
    await Promise.all([before, memo.get(catalog, 'a', list.load)]);
    expect(list.loads()).toBe(3);
  });

  it('keeps nothing read while a write is open, and nothing older than the age limit it was given', async () => {
    vi.useFakeTimers();
    const catalog = new Catalog();
    const memo = new IdListMemo(100);
    const list = counted([1]);
    catalog.writing = true;
    await memo.get(catalog, 'a', list.load, 60_000);
    await memo.get(catalog, 'a', list.load, 60_000);
    expect(list.loads()).toBe(2);
    catalog.writing = false;
    await memo.get(catalog, 'a', list.load, 60_000);
    vi.advanceTimersByTime(59_000);
    await memo.get(catalog, 'a', list.load, 60_000);
    expect(list.loads()).toBe(3);
    vi.advanceTimersByTime(2_000);
    await memo.get(catalog, 'a', list.load, 60_000);
    expect(list.loads()).toBe(4);
  });

  it('keeps a list without an age limit for as long as the catalog is unchanged', async () => {
    vi.useFakeTimers();
    const catalog = new Catalog();
    const memo = new IdListMemo(100);
    const list = counted([1, 2]);
    await memo.get(catalog, 'a', list.load);
    vi.advanceTimersByTime(3_600_000);
    await memo.get(catalog, 'a', list.load);
    expect(list.loads()).toBe(1);
    catalog.state = { ...catalog.state, changes: 5 };
    await memo.get(catalog, 'a', list.load);
    expect(list.loads()).toBe(2);
  });

  it('drops the least recently used lists to stay within its budget of ids, and always keeps the newest', async () => {
    const catalog = new Catalog();
    const memo = new IdListMemo(10);
    const a = counted([1, 2, 3, 4]);
    const b = counted([5, 6, 7, 8]);
    const c = counted([9, 10, 11, 12]);
    await memo.get(catalog, 'a', a.load);
    await memo.get(catalog, 'b', b.load);
    await memo.get(catalog, 'a', a.load);
    expect(memo.size).toEqual({ lists: 2, ids: 8 });
    // c pushes out b, the least recently used.
    await memo.get(catalog, 'c', c.load);
    expect(memo.size).toEqual({ lists: 2, ids: 8 });
    await memo.get(catalog, 'a', a.load);
    await memo.get(catalog, 'b', b.load);
    expect([a.loads(), b.loads(), c.loads()]).toEqual([1, 2, 1]);
    const huge = counted(Array.from({ length: 25 }, (_, i) => i));
    await memo.get(catalog, 'huge', huge.load);
    expect(memo.size).toEqual({ lists: 1, ids: 25 });
    await memo.get(catalog, 'huge', huge.load);
    expect(huge.loads()).toBe(1);
  });
});

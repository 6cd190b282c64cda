// The Hardcover push decisions that the daemon test does not reach: resuming a book marked read or read in another
// edition, the slug look-up, refusals reported inside a mutation, the key mask and the per-key rate limit.
import { describe, expect, it } from 'vitest';
import { createTokenBucket, HardcoverSyncError, type HardcoverApi } from '../../src/core/hardcover/hardcover-api.ts';
import { pushProgress, type BookIdentifiers } from '../../src/core/hardcover/progress-push.ts';
import { maskApiKey } from '../../src/core/hardcover/sync-settings.ts';

type Json = Record<string, unknown>;

/** A scripted API: answers by operation name, recording what was asked. */
function scripted(answers: Record<string, (variables: Json) => Json>): HardcoverApi & { ops: { op: string; variables: Json }[] } {
  const ops: { op: string; variables: Json }[] = [];
  return {
    ops,
    async call(document, variables) {
      const op = /(?:query|mutation)\s+(\w+)/.exec(document)?.[1] ?? '';
      ops.push({ op, variables });
      const answer = answers[op];
      if (!answer) throw new Error(`unexpected ${op}`);
      return answer(variables);
    },
  };
}

const byId: BookIdentifiers = { hardcoverBookId: '7', hardcoverSlug: null, isbn13: null, isbn10: null };
const book = { books: [{ id: 7, pages: 100, default_ebook_edition: { id: 70, pages: 200 }, default_physical_edition: null }] };
const read = (id: number, edition: number | null, finished: string | null = null) => ({ id, edition_id: edition, started_at: '2025-01-01', finished_at: finished, progress: null, progress_pages: 10 });

describe('pushProgress', () => {
  it('puts a book marked read back to "currently reading" and updates the read Hardcover starts', async () => {
    const api = scripted({
      BinderyBook: () => book,
      BinderyUserBook: () => ({ me: [{ user_books: [{ id: 5, status_id: 3, edition_id: 70, user_book_reads: [read(50, 70, '2025-01-09')] }] }] }),
      BinderyResumeUserBook: () => ({ update_user_book: { id: 5, error: null, user_book: { id: 5, status_id: 2, edition_id: 70, user_book_reads: [read(50, 70, '2025-01-09'), read(51, 70)] } } }),
      BinderyUpdateRead: () => ({ update_user_book_read: { id: 51, error: null } }),
    });
    const outcome = await pushProgress(api, byId, 25, '2025-02-01');
    expect(outcome).toMatchObject({ status: 'synced', read: 'updated', progressPages: 50, pages: 200 });
    expect(api.ops.map((o) => o.op)).toEqual(['BinderyBook', 'BinderyUserBook', 'BinderyResumeUserBook', 'BinderyUpdateRead']);
    expect(api.ops[2]?.variables).toEqual({ id: 5, object: { edition_id: 70, status_id: 2 } });
    // The newest read (51), not the finished one.
    expect(api.ops[3]?.variables).toEqual({ id: 51, object: { edition_id: 70, started_at: '2025-01-01', progress_pages: 50 } });
  });

  it('starts a new read when the latest one is of another edition', async () => {
    const api = scripted({
      BinderyBook: () => book,
      BinderyUserBook: () => ({ me: [{ user_books: [{ id: 5, status_id: 2, edition_id: 70, user_book_reads: [read(50, 99)] }] }] }),
      BinderyStartRead: () => ({ insert_user_book_read: { error: null, user_book_read: { id: 52 } } }),
    });
    const outcome = await pushProgress(api, byId, 100, '2025-02-01');
    expect(outcome).toMatchObject({ status: 'synced', read: 'started', finished: true, progressPages: 200 });
    expect(api.ops.at(-1)?.variables).toEqual({ userBookId: 5, read: { edition_id: 70, started_at: '2025-02-01', progress_pages: 200, finished_at: '2025-02-01' } });
  });

  it('looks a book up by its slug when the stored id is not a number, and skips editions without pages', async () => {
    const api = scripted({ BinderyBook: () => ({ books: [{ id: 8, pages: null, default_ebook_edition: { id: 80, pages: null }, default_physical_edition: null }] }) });
    const outcome = await pushProgress(api, { hardcoverBookId: 'not-a-number', hardcoverSlug: 'some-book', isbn13: null, isbn10: null }, 50, '2025-02-01');
    expect(outcome).toEqual({ status: 'skipped', reason: 'no-pages' });
    expect(api.ops).toEqual([{ op: 'BinderyBook', variables: { slug: 'some-book' } }]);
  });

  it('reports a refusal inside a mutation as an error', async () => {
    const api = scripted({
      BinderyBook: () => book,
      BinderyUserBook: () => ({ me: [{ user_books: [] }] }),
      BinderyAddUserBook: () => ({ insert_user_book: { error: 'Book is private', user_book: null } }),
    });
    await expect(pushProgress(api, byId, 10, '2025-02-01')).rejects.toThrow(HardcoverSyncError);
  });
});

describe('maskApiKey', () => {
  it('shows only the last four characters of a long key and nothing of a short one', () => {
    expect(maskApiKey('Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig4')).toBe('********sig4');
    expect(maskApiKey('short')).toBe('********');
    expect(maskApiKey(null)).toBeNull();
    expect(maskApiKey('')).toBe('');
  });
});

describe('createTokenBucket', () => {
  it('lets a burst through at once, then spaces requests at the refill rate', async () => {
    const bucket = createTokenBucket(3, 600); // a token every 100 ms
    const started = Date.now();
    for (let i = 0; i < 3; i++) await bucket.acquire();
    expect(Date.now() - started).toBeLessThan(50);
    await bucket.acquire();
    await bucket.acquire();
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  });
});

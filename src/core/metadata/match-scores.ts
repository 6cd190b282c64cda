// Keeping book.metadata_match_score current: after an edit, and for the whole catalog on request.
import { libraryRoots, loadBundles } from '../books/book-bundles.ts';
import { assembleBook } from '../books/book-json.ts';
import { bookJson } from '../books/book-view.ts';
import { readSetting } from '../settings/app-settings.ts';
import type { Db, Store } from '../store/store.ts';
import { computeMatchScore, matchWeights, type MatchWeights } from './match-score.ts';

export async function currentWeights(db: Db): Promise<MatchWeights> {
  return matchWeights(await readSetting(db, 'METADATA_MATCH_WEIGHTS'));
}

/** Recomputes one book's score from its BookMetadata as it is stored now (as the catalog-wide recalculation does). */
export async function updateMatchScore(db: Db, bookId: number, weights?: MatchWeights): Promise<number | null> {
  const book = await bookJson(db, bookId);
  if (!book) return null;
  const score = computeMatchScore(book.metadata as Record<string, unknown>, weights ?? (await currentWeights(db)));
  await db.updateTable('book').set({ metadata_match_score: score }).where('id', '=', bookId).execute();
  return score;
}

const BATCH = 250;

/** Every book's score, a batch at a time (each batch read in one snapshot, written in one transaction). */
export async function recalculateMatchScores(store: Store): Promise<number> {
  const weights = await currentWeights(store.db);
  const ids = (await store.db.selectFrom('book').select('id').orderBy('id').execute()).map((r) => r.id);
  const options = { listView: false, withDescription: true };
  for (let i = 0; i < ids.length; i += BATCH) {
    const batch = ids.slice(i, i + BATCH);
    const scores = await store.read(async (scope) => {
      const roots = await libraryRoots(scope);
      return (await loadBundles(scope, batch, options)).map((bundle) => [bundle.book.id, computeMatchScore(assembleBook(bundle, roots, options).metadata as Record<string, unknown>, weights)] as const);
    });
    await store.write(async ({ db }) => {
      for (const [id, score] of scores) await db.updateTable('book').set({ metadata_match_score: score }).where('id', '=', id).execute();
    });
  }
  return ids.length;
}

// What follows any change to a book's metadata, whoever made it (an edit, a bulk edit, an accepted match): the match
// score, the metadata written into the book file, and the sidecar rewritten, each as the settings ask. The change
// itself has happened; what fails here is reported, not thrown.
import { sidecarAfterMetadataChange } from '../sidecar/book-sidecar.ts';
import type { SidecarError } from '../sidecar/errors.ts';
import type { Store } from '../store/store.ts';
import { updateMatchScore } from './match-scores.ts';
import { writeBackBook, type BookWriteBack } from './write-back/book-file.ts';

export interface AfterChange {
  matchScore: number | null;
  writeBack: BookWriteBack;
  sidecarError: SidecarError | undefined;
}

export async function afterMetadataChange(store: Pick<Store, 'db'>, coversRoot: string, bookId: number): Promise<AfterChange> {
  const matchScore = await updateMatchScore(store.db, bookId);
  const writeBack = await writeBackBook(store.db, bookId);
  const sidecarError = await sidecarAfterMetadataChange(store, coversRoot, bookId);
  return { matchScore, writeBack, sidecarError };
}

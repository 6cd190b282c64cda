// Changing a book's cover (or its audiobook cover): from an image, from the book's own file, or generated. Each
// change writes new cover files, a new cover token (so ETags change) and a new `coverUpdatedOn`; a locked cover is
// refused.
import { parseFormatPriority } from '../books/book-json.ts';
import { bookFiles, type LocatedFile } from '../books/file-locations.ts';
import { pickPrimary } from '../books/primary-file.ts';
import { CodedError } from '../coded-error.ts';
import { loadSharp } from './sharp-loader.ts';
import { FormatError } from '../formats/errors.ts';
import { LIMITS } from '../formats/limits.ts';
import { folderAudiobookFormat, formatOf } from '../formats/index.ts';
import { readSetting } from '../settings/app-settings.ts';
import type { Db } from '../store/store.ts';
import { emitEvent } from '../events/live-events.ts';
import { nowIso } from '../time.ts';
import { DEFAULT_COVER_CROPPING, type CoverCropping } from './cover-cropping.ts';
import { makeCoverImages, type CoverKind } from './cover-images.ts';
import { newCoverHash, saveCoverImages } from './cover-store.ts';
import { renderCustomCover } from './custom-cover.ts';

export type CoverChangeErrorCode = 'NOT_FOUND' | 'LOCKED' | 'NO_FILE' | 'NO_COVER' | 'BAD_IMAGE';

export class CoverChangeError extends CodedError<CoverChangeErrorCode> {}

const LOCK_COLUMN: Record<CoverKind, 'cover_locked' | 'audiobook_cover_locked'> = { book: 'cover_locked', audiobook: 'audiobook_cover_locked' };

/** Whether the cover of that kind may change: the book exists and its cover lock (or the all-fields lock) is off. */
export async function coverLocked(db: Db, bookId: number, kind: CoverKind): Promise<boolean> {
  const book = await db.selectFrom('book').leftJoin('book_metadata', 'book_metadata.book_id', 'book.id').select(['book.id', 'book_metadata.cover_locked', 'book_metadata.audiobook_cover_locked', 'book_metadata.all_fields_locked']).where('book.id', '=', bookId).executeTakeFirst();
  if (!book) throw new CoverChangeError('NOT_FOUND', `Book not found with ID: ${bookId}`);
  return book.all_fields_locked === 1 || book[LOCK_COLUMN[kind]] === 1;
}

async function requireUnlocked(db: Db, bookId: number, kind: CoverKind): Promise<void> {
  if (await coverLocked(db, bookId, kind)) throw new CoverChangeError('LOCKED', 'Attempt to update locked metadata');
}

async function croppingSettings(db: Db): Promise<CoverCropping> {
  const value = (await readSetting(db, 'COVER_CROPPING_SETTINGS')) as Partial<CoverCropping> | null;
  return { ...DEFAULT_COVER_CROPPING, ...(value ?? {}) };
}

/** An audiobook cover is square: the middle square of a portrait or landscape image. */
async function squared(image: Buffer): Promise<Buffer> {
  const sharp = await loadSharp();
  const options = { limitInputPixels: LIMITS.maxImagePixels, failOn: 'error' as const };
  try {
    const meta = await sharp(image, options).metadata();
    // EXIF orientations 5 to 8 turn the picture a quarter: width and height swap.
    const [width, height] = (meta.orientation ?? 1) >= 5 ? [meta.height, meta.width] : [meta.width, meta.height];
    if (!width || !height || width === height) return image;
    const side = Math.min(width, height);
    return await sharp(image, options).rotate().resize({ width: side, height: side, fit: 'cover', position: 'centre' }).png().toBuffer();
  } catch (error) {
    throw new CoverChangeError('BAD_IMAGE', `cover image cannot be decoded: ${(error as Error).message}`);
  }
}

/** Makes the cover files from `image` and records the change; `image` must already be a checked image. */
export async function setCoverImage(db: Db, coversRoot: string, bookId: number, kind: CoverKind, image: Buffer): Promise<void> {
  await requireUnlocked(db, bookId, kind);
  let images;
  try {
    images = await makeCoverImages(kind === 'audiobook' ? await squared(image) : image, kind, await croppingSettings(db));
  } catch (error) {
    if (error instanceof FormatError) throw new CoverChangeError('BAD_IMAGE', error.message);
    throw error;
  }
  await saveCoverImages(coversRoot, bookId, kind, images);
  const now = nowIso();
  await db.transaction().execute(async (trx) => {
    if (kind === 'audiobook') {
      await trx.updateTable('book').set({ audiobook_cover_hash: newCoverHash(), metadata_updated_at: now }).where('id', '=', bookId).execute();
      await trx.updateTable('book_metadata').set({ audiobook_cover_updated_on: now }).where('book_id', '=', bookId).execute();
    } else {
      await trx.updateTable('book').set({ book_cover_hash: newCoverHash(), metadata_updated_at: now }).where('id', '=', bookId).execute();
      await trx.updateTable('book_metadata').set({ cover_updated_on: now }).where('book_id', '=', bookId).execute();
    }
    await emitEvent(trx, { kind: 'covers-changed', bookIds: [bookId] });
  });
}

/** The file a cover of that kind comes from: an ebook file by the library's format priority, or the audiobook. */
async function sourceFile(db: Db, bookId: number, kind: CoverKind): Promise<LocatedFile | undefined> {
  const located = await bookFiles(db, bookId);
  if (!located) throw new CoverChangeError('NOT_FOUND', `Book not found with ID: ${bookId}`);
  const candidates = located.files.filter((f) => f.isBook && f.path !== undefined && (kind === 'audiobook' ? f.bookType === 'AUDIOBOOK' : f.bookType !== 'AUDIOBOOK'));
  if (candidates.length <= 1) return candidates[0];
  const library = await db.selectFrom('book').innerJoin('library', 'library.id', 'book.library_id').select('library.format_priority').where('book.id', '=', bookId).executeTakeFirst();
  const rows = await db.selectFrom('book_file').select(['id', 'book_type', 'missing_at']).where('id', 'in', candidates.map((c) => c.id)).execute();
  const best = pickPrimary(rows, parseFormatPriority(library?.format_priority ?? null));
  return candidates.find((c) => c.id === best?.id);
}

/** Takes the cover again from the book's own file (an ebook's cover, or the audiobook's embedded picture). */
export async function regenerateCover(db: Db, coversRoot: string, bookId: number, kind: CoverKind): Promise<void> {
  await requireUnlocked(db, bookId, kind);
  const file = await sourceFile(db, bookId, kind);
  if (!file?.path) throw new CoverChangeError('NO_FILE', kind === 'audiobook' ? 'Failed to regenerate cover: no audiobook file found' : 'Failed to regenerate cover: no ebook file found for the book');
  const extract = file.folderBased ? folderAudiobookFormat.extract : formatOf(file.fileName)?.extract;
  if (!extract) throw new CoverChangeError('NO_FILE', 'Failed to regenerate cover: the file format is not known');
  let cover;
  try {
    cover = (await extract(file.path)).cover;
  } catch (error) {
    if (error instanceof FormatError) throw new CoverChangeError('NO_COVER', `Failed to regenerate cover: ${error.message}`);
    throw error;
  }
  if (!cover) throw new CoverChangeError('NO_COVER', kind === 'audiobook' ? 'Failed to regenerate cover: no embedded cover image found in the audiobook file' : 'Failed to regenerate cover: no embedded cover image found in the file');
  await setCoverImage(db, coversRoot, bookId, kind, cover.data);
}

/** Sets a generated cover (title and authors in type) as the book's (or audiobook's) cover. */
export async function generateCover(db: Db, coversRoot: string, bookId: number, kind: CoverKind): Promise<void> {
  await requireUnlocked(db, bookId, kind);
  const meta = await db.selectFrom('book_metadata').select('title').where('book_id', '=', bookId).executeTakeFirst();
  const authors = await db
    .selectFrom('book_metadata_author_mapping as m')
    .innerJoin('author as a', 'a.id', 'm.author_id')
    .select('a.name')
    .where('m.book_id', '=', bookId)
    .orderBy('m.sort_order')
    .execute();
  const image = await renderCustomCover({ title: meta?.title, authors: authors.map((a) => a.name) }, kind);
  await setCoverImage(db, coversRoot, bookId, kind, image);
}

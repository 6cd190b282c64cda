// Export or import the sidecars of every book of a library, a page of books at a time, one book's failure never
// stopping the rest.
import type { Principal } from '../auth/principal.ts';
import { visibleBookFilter } from '../auth/visibility.ts';
import type { Store } from '../store/store.ts';
import { disabled, exportBookSidecar, importBookSidecar } from './book-sidecar.ts';
import { SidecarError, type SidecarErrorCode } from './errors.ts';
import { sidecarSettings } from './settings.ts';

export interface BookFailure {
  bookId: number;
  code: SidecarErrorCode | 'INTERNAL_ERROR';
  message: string;
}

export interface LibrarySidecarRun {
  libraryId: number;
  libraryName: string;
  /** Books looked at. */
  books: number;
  /** Sidecars written (export) or read into the catalog (import). */
  done: number;
  /** Of the imported ones, those that changed the catalog. */
  changed: number;
  /** Books with nothing to do: no file on disk (export), no sidecar file (import). */
  skipped: number;
  failed: number;
  /** The first MAX_LISTED failures. */
  failures: BookFailure[];
}

export interface LibraryRunOptions {
  /** Export: write even though sidecars are turned off in the settings. */
  force?: boolean;
  /** Export: write the cover image too (default: the `includeCoverFile` setting). */
  includeCover?: boolean;
  /** Only the books this user may see (an API caller); every book when absent (the CLI). */
  principal?: Principal;
  onProgress?: (done: number) => void;
}

const PAGE = 200;
const MAX_LISTED = 100;
/** Outcomes that mean "nothing to do for this book" rather than a failure. */
const SKIPS: Record<'export' | 'import', ReadonlySet<SidecarErrorCode>> = {
  export: new Set(['NO_BOOK_FILE']),
  import: new Set(['NO_BOOK_FILE', 'SIDECAR_NOT_FOUND']),
};

async function* libraryBookIds(store: Pick<Store, 'db'>, libraryId: number, principal: Principal | undefined): AsyncGenerator<number> {
  let after = 0;
  for (;;) {
    let query = store.db.selectFrom('book').select('id').where('library_id', '=', libraryId).where('deleted', '=', 0).where('id', '>', after);
    if (principal) query = query.where(visibleBookFilter(principal));
    const rows = await query.orderBy('book.id').limit(PAGE).execute();
    for (const row of rows) yield row.id;
    const last = rows.at(-1);
    if (!last || rows.length < PAGE) return;
    after = last.id;
  }
}

async function runOverLibrary(store: Pick<Store, 'db'>, libraryId: number, action: 'export' | 'import', perBook: (bookId: number) => Promise<boolean>, options: LibraryRunOptions): Promise<LibrarySidecarRun> {
  const library = await store.db.selectFrom('library').select(['id', 'name']).where('id', '=', libraryId).executeTakeFirst();
  if (!library) throw new SidecarError('LIBRARY_NOT_FOUND', `Library not found with ID: ${libraryId}`);
  const run: LibrarySidecarRun = { libraryId, libraryName: library.name, books: 0, done: 0, changed: 0, skipped: 0, failed: 0, failures: [] };
  for await (const bookId of libraryBookIds(store, libraryId, options.principal)) {
    run.books++;
    try {
      if (await perBook(bookId)) run.changed++;
      run.done++;
    } catch (error) {
      if (error instanceof SidecarError && SKIPS[action].has(error.code)) run.skipped++;
      else {
        run.failed++;
        const failure: BookFailure = error instanceof SidecarError ? { bookId, code: error.code, message: error.message } : { bookId, code: 'INTERNAL_ERROR', message: error instanceof Error ? error.message : String(error) };
        if (run.failures.length < MAX_LISTED) run.failures.push(failure);
      }
    }
    options.onProgress?.(run.books);
  }
  return run;
}

/** Writes a sidecar for every book of the library that has its file on disk. */
export async function exportLibrarySidecars(store: Pick<Store, 'db'>, coversRoot: string, libraryId: number, options: LibraryRunOptions = {}): Promise<LibrarySidecarRun> {
  const settings = await sidecarSettings(store.db);
  if (!settings.enabled && !options.force) {
    const library = await store.db.selectFrom('library').select('id').where('id', '=', libraryId).executeTakeFirst();
    if (!library) throw new SidecarError('LIBRARY_NOT_FOUND', `Library not found with ID: ${libraryId}`);
    throw disabled();
  }
  const includeCover = options.includeCover ?? settings.includeCoverFile;
  return runOverLibrary(store, libraryId, 'export', async (bookId) => {
    await exportBookSidecar(store, coversRoot, bookId, { force: true, includeCover });
    return false;
  }, options);
}

/** Imports the sidecar of every book of the library that has one. */
export async function importLibrarySidecars(store: Pick<Store, 'db'>, coversRoot: string, libraryId: number, options: LibraryRunOptions = {}): Promise<LibrarySidecarRun> {
  return runOverLibrary(store, libraryId, 'import', async (bookId) => (await importBookSidecar(store, coversRoot, bookId)).changed.length > 0, options);
}

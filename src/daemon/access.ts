// Route-side helpers over core visibility: turn "missing"/"hidden" into Grimmory's 404/403.
import { bookAccessOf, canSeeLibrary } from '../core/auth/visibility.ts';
import type { Principal } from '../core/auth/principal.ts';
import type { DaemonContext } from './context.ts';
import { ApiError, bookNotFound, forbidden } from './http-errors.ts';

/** Throws 404 for a book that does not exist and 403 for one the caller may not see. */
export async function requireBookAccess(ctx: DaemonContext, principal: Principal, bookId: number): Promise<void> {
  const access = await bookAccessOf(ctx.store, principal, bookId);
  if (access === 'missing') throw bookNotFound(bookId);
  if (access === 'hidden') throw forbidden('You are not authorized to access this book.');
}

export async function requireLibraryAccess(ctx: DaemonContext, principal: Principal, libraryId: number): Promise<void> {
  const exists = await ctx.store.db.selectFrom('library').select('id').where('id', '=', libraryId).executeTakeFirst();
  if (!exists) throw new ApiError(404, `Library not found with ID: ${libraryId}`);
  if (!canSeeLibrary(principal, libraryId)) throw forbidden('You are not authorized to access this library.');
}

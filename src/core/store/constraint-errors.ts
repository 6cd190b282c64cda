// Telling a refused write (a broken constraint) from other failures, whichever engine raised it.

const codeOf = (error: unknown): unknown => (error as { code?: unknown } | null)?.code;

/** Any integrity constraint refused the write: SQLite's SQLITE_CONSTRAINT_*, PostgreSQL's class 23. */
export function isConstraintViolation(error: unknown): boolean {
  const code = codeOf(error);
  return typeof code === 'string' && (code.startsWith('SQLITE_CONSTRAINT') || /^23[0-9A-Z]{3}$/.test(code));
}

// Telling a broken constraint apart from other database errors, on either engine: SQLite's codes are SQLITE_CONSTRAINT_*,
// PostgreSQL's SQLSTATE class 23.
export type ConstraintKind = 'unique' | 'foreign-key' | 'not-null' | 'check' | 'other';

const SQLITE: Readonly<Record<string, ConstraintKind>> = {
  SQLITE_CONSTRAINT_UNIQUE: 'unique',
  SQLITE_CONSTRAINT_PRIMARYKEY: 'unique',
  SQLITE_CONSTRAINT_FOREIGNKEY: 'foreign-key',
  SQLITE_CONSTRAINT_NOTNULL: 'not-null',
  SQLITE_CONSTRAINT_CHECK: 'check',
};

const POSTGRES: Readonly<Record<string, ConstraintKind>> = {
  '23505': 'unique',
  '23503': 'foreign-key',
  '23502': 'not-null',
  '23514': 'check',
};

/** Which constraint the error broke, or undefined when it is not a constraint error. */
export function constraintViolation(error: unknown): ConstraintKind | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return undefined;
  if (code.startsWith('SQLITE_CONSTRAINT')) return SQLITE[code] ?? 'other';
  if (code.startsWith('23')) return POSTGRES[code] ?? 'other';
  return undefined;
}

/** Any integrity constraint refused the write. */
export function isConstraintViolation(error: unknown): boolean {
  return constraintViolation(error) !== undefined;
}

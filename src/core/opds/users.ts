// OPDS accounts (Grimmory's OpdsUserV2): separate credentials a reader app signs in with over HTTP Basic, each owned
// by a main user whose libraries, restrictions and shelves its feeds show.
import type { SignInPolicy } from '../auth/login-rate-limit.ts';
import { passwordChecks } from '../auth/password-checks.ts';
import { dummyHash, hashPassword } from '../auth/password-hashing.ts';
import { sql, type SqlBool } from 'kysely';
import { nocaseSql } from '../komga/sql.ts';
import { dialectOf } from '../store/dialect.ts';
import { memosPerOwner } from '../store/snapshot.ts';
import type { Db, Store } from '../store/store.ts';
import { OPDS_SORT_ORDERS, type OpdsSortOrder } from './catalog.ts';

export type OpdsUserErrorCode = 'INVALID' | 'CONFLICT' | 'NOT_FOUND' | 'FORBIDDEN';

export class OpdsUserError extends Error {
  override name = 'OpdsUserError';
  readonly code: OpdsUserErrorCode;
  readonly details: string[] | undefined;
  constructor(code: OpdsUserErrorCode, message: string, details?: string[]) {
    super(message);
    this.code = code;
    this.details = details;
  }
}

/** Grimmory's `OpdsUserV2` JSON (the password hash never leaves the server). */
export interface OpdsUserJson {
  id: number;
  userId: number;
  username: string;
  sortOrder: OpdsSortOrder;
}

interface Row {
  id: number;
  user_id: number;
  username: string;
  password_hash: string;
  sort_order: string;
}

const COLUMNS = ['id', 'user_id', 'username', 'password_hash', 'sort_order'] as const;

/** The account with this name, letter case aside (the column's collation on SQLite, its lower() index on PostgreSQL). */
const sameName = (db: Db, username: string) => sql<SqlBool>`${nocaseSql(dialectOf(db), sql.ref('username'))} = ${nocaseSql(dialectOf(db), username)}`;

/**
 * The account signing in, in plain SQL built once per dialect (readers send their credentials with every request):
 * the name compared as `sameName` compares it.
 */
const accountStatements = new Map<string, [before: string, after: string]>();

async function accountNamed(db: Db, username: string): Promise<Row | undefined> {
  const dialect = dialectOf(db);
  let statement = accountStatements.get(dialect.engine);
  if (!statement) {
    const [before, after] = dialect.nocase('\uE000').split('\uE000') as [string, string];
    statement = [`SELECT ${COLUMNS.join(', ')} FROM opds_user_v2 WHERE ${dialect.nocase('username')} = ${before}`, `${after} LIMIT 1`];
    accountStatements.set(dialect.engine, statement);
  }
  const { rows } = await sql<Row>`${sql.raw(statement[0])}${username}${sql.raw(statement[1])}`.execute(db);
  return rows[0];
}

const accounts = memosPerOwner<string, Row | undefined>(256);

/**
 * `accountNamed`, remembered until the catalog (which holds the accounts and their passwords) changes: readers send
 * their credentials with every request. Names without an account are read each time.
 */
function rememberedAccount(store: Store, username: string): Promise<Row | undefined> {
  const memo = accounts(store);
  return memo.getAsync(store, username, () => accountNamed(store.db, username));
}

export function isSortOrder(value: unknown): value is OpdsSortOrder {
  return typeof value === 'string' && (OPDS_SORT_ORDERS as readonly string[]).includes(value);
}

const sortOrderOf = (value: string): OpdsSortOrder => (isSortOrder(value) ? value : 'RECENT');

function json(row: Omit<Row, 'password_hash'>): OpdsUserJson {
  return { id: row.id, userId: row.user_id, username: row.username, sortOrder: sortOrderOf(row.sort_order) };
}

export async function listOpdsUsers(db: Db, ownerId: number): Promise<OpdsUserJson[]> {
  const rows = await db.selectFrom('opds_user_v2').select(COLUMNS).where('user_id', '=', ownerId).orderBy('id').execute();
  return rows.map(json);
}

export interface NewOpdsUser {
  username?: unknown;
  password?: unknown;
  sortOrder?: unknown;
}

/** bcrypt reads at most 72 bytes; a longer password would be silently cut. */
const PASSWORD_MAX_BYTES = 72;

export async function createOpdsUser(db: Db, ownerId: number, input: NewOpdsUser): Promise<OpdsUserJson> {
  const problems: string[] = [];
  const username = typeof input.username === 'string' ? input.username.trim() : '';
  if (username === '') problems.push('username: must not be blank');
  else if (username.length > 100) problems.push('username: size must be between 1 and 100');
  else if (username.includes(':')) problems.push('username: must not contain ":" (HTTP Basic separates the password with it)');
  const password = typeof input.password === 'string' ? input.password : '';
  if (password === '') problems.push('password: must not be blank');
  else if (Buffer.byteLength(password, 'utf8') > PASSWORD_MAX_BYTES) problems.push(`password: must be at most ${PASSWORD_MAX_BYTES} bytes`);
  if (input.sortOrder !== undefined && input.sortOrder !== null && !isSortOrder(input.sortOrder)) {
    problems.push(`sortOrder: must be one of ${OPDS_SORT_ORDERS.join(', ')}`);
  }
  if (problems.length > 0) throw new OpdsUserError('INVALID', 'Validation error', problems);

  const taken = await db.selectFrom('opds_user_v2').select('id').where(sameName(db, username)).executeTakeFirst();
  if (taken) throw new OpdsUserError('CONFLICT', `Username '${username}' is already taken`);
  const hash = await hashPassword(password);
  try {
    const row = await db
      .insertInto('opds_user_v2')
      .values({ user_id: ownerId, username, password_hash: hash, sort_order: isSortOrder(input.sortOrder) ? input.sortOrder : 'RECENT' })
      .returning(['id', 'user_id', 'username', 'sort_order'])
      .executeTakeFirstOrThrow();
    return json(row);
  } catch (error) {
    // Another request took the name between the check and the insert.
    if (error instanceof Error && /UNIQUE|duplicate key/i.test(error.message)) throw new OpdsUserError('CONFLICT', `Username '${username}' is already taken`);
    throw error;
  }
}

/** The caller's own account, or why not: missing (404) or someone else's (403). */
async function ownAccount(db: Db, ownerId: number, id: number): Promise<Row> {
  const row = await db.selectFrom('opds_user_v2').select(COLUMNS).where('id', '=', id).executeTakeFirst();
  if (!row) throw new OpdsUserError('NOT_FOUND', `User not found with ID: ${id}`);
  if (row.user_id !== ownerId) throw new OpdsUserError('FORBIDDEN', 'Access denied.');
  return row;
}

export async function updateOpdsUser(db: Db, ownerId: number, id: number, input: { sortOrder?: unknown }): Promise<OpdsUserJson> {
  if (input.sortOrder === undefined || input.sortOrder === null) throw new OpdsUserError('INVALID', 'Validation error', ['sortOrder: must not be null']);
  if (!isSortOrder(input.sortOrder)) throw new OpdsUserError('INVALID', 'Validation error', [`sortOrder: must be one of ${OPDS_SORT_ORDERS.join(', ')}`]);
  const row = await ownAccount(db, ownerId, id);
  await db
    .updateTable('opds_user_v2')
    .set({ sort_order: input.sortOrder, updated_at: new Date().toISOString() })
    .where('id', '=', row.id)
    .execute();
  return json({ ...row, sort_order: input.sortOrder });
}

export async function deleteOpdsUser(db: Db, ownerId: number, id: number): Promise<void> {
  const row = await ownAccount(db, ownerId, id);
  await db.deleteFrom('opds_user_v2').where('id', '=', row.id).execute();
}

/** Who a reader app signed in as. */
export interface OpdsSession {
  opdsUserId: number;
  username: string;
  ownerId: number;
  sortOrder: OpdsSortOrder;
}

export type OpdsCredentialFailure = 'MISSING' | 'MALFORMED' | 'BAD_CREDENTIALS';

/** `Basic base64(user:password)` → its two parts; undefined when the header is not Basic or not decodable. */
export function parseBasic(header: string | undefined): { username: string; password: string } | undefined {
  if (!header) return undefined;
  const match = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

export type OpdsSignInRefusal = OpdsCredentialFailure | 'RATE_LIMITED';

/**
 * Checks HTTP Basic credentials from address `ip` against the OPDS accounts, under the sign-in policy: refused before
 * any password work once the address or the name has used up its failures. The bcrypt work runs on the password pool
 * and is shared and remembered (password-checks.ts): readers send their password with every request.
 */
export async function checkOpdsCredentials(store: Store, policy: SignInPolicy, ip: string, header: string | undefined): Promise<OpdsSession | OpdsSignInRefusal> {
  if (!header) return 'MISSING';
  const credentials = parseBasic(header);
  if (!credentials) return 'MALFORMED';
  if (await policy.isBlocked(ip, 'basic', credentials.username)) return 'RATE_LIMITED';
  const row = await rememberedAccount(store, credentials.username);
  // An unknown name is checked against a stand-in hash: the same work and time as a wrong password.
  const { matches, fresh } = await passwordChecks.check(credentials.username, credentials.password, row?.password_hash ?? (await dummyHash()));
  if (!row || !matches) {
    // A repeat of a wrong password answered from memory is not a new guess.
    if (fresh) await policy.recordFailure(ip, 'basic', credentials.username);
    return 'BAD_CREDENTIALS';
  }
  await policy.recordSuccess(ip, 'basic', credentials.username);
  return { opdsUserId: row.id, username: row.username, ownerId: row.user_id, sortOrder: sortOrderOf(row.sort_order) };
}

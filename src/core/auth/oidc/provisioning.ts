// The Bindery account an OIDC identity signs in as: the one bound to (issuer, subject); else one with the same
// username that may be linked (already OIDC-provisioned and unbound, or local while account linking is on); else a new
// account when auto-provisioning is on. Unlike Grimmory, an account bound to another subject is never taken over:
// that is a username collision, refused.
import { randomBytes } from 'node:crypto';
import { PERMISSIONS, type Permission } from '../permissions.ts';
import type { Db } from '../../store/store.ts';
import { createUser, findUserByName, UserError } from '../../users/users.ts';
import type { OidcIdentity } from './claims.ts';
import { notProvisioned, usernameTaken } from './oidc-error.ts';
import type { AutoProvisioning } from './oidc-settings.ts';

export interface OidcAccount {
  id: number;
  username: string;
  isDefaultPassword: boolean;
  /** How the account was found: bound, linked by username, or created now. */
  outcome: 'bound' | 'linked' | 'provisioned';
  /** A local (or forward-auth) account became an OIDC one. */
  linkedLocalAccount: boolean;
}

interface AccountRow {
  id: number;
  username: string;
  is_default_password: number;
  email: string | null;
  name: string;
  avatar_url: string | null;
  provisioning_method: string | null;
  oidc_subject: string | null;
  oidc_issuer: string | null;
}

const COLUMNS = ['id', 'username', 'is_default_password', 'email', 'name', 'avatar_url', 'provisioning_method', 'oidc_subject', 'oidc_issuer'] as const;

/** The plain flags default permissions may grant (not admin, demo user, bulk actions or file moves). */
const PROVISIONABLE = PERMISSIONS.filter(([json]) => json !== 'admin' && json !== 'demoUser' && !json.startsWith('canBulk') && json !== 'canMoveOrganizeFiles');

export function defaultPermissions(entityNames: readonly string[]): Partial<Record<Permission, boolean>> {
  const out: Partial<Record<Permission, boolean>> = {};
  for (const [json, entity] of PROVISIONABLE) out[json] = entityNames.includes(entity);
  return out;
}

async function byIdentity(db: Db, issuer: string, subject: string): Promise<AccountRow | undefined> {
  return db.selectFrom('users').select(COLUMNS).where('oidc_issuer', '=', issuer).where('oidc_subject', '=', subject).executeTakeFirst();
}

async function byId(db: Db, id: number): Promise<AccountRow> {
  return db.selectFrom('users').select(COLUMNS).where('id', '=', id).executeTakeFirstOrThrow();
}

async function emailFree(db: Db, email: string, exceptUserId?: number): Promise<boolean> {
  let query = db.selectFrom('users').select('id').where('email', '=', email);
  if (exceptUserId !== undefined) query = query.where('id', '!=', exceptUserId);
  return (await query.executeTakeFirst()) === undefined;
}

/** Bound to this identity, or free to be bound to it. */
function bindable(row: AccountRow, issuer: string, subject: string): boolean {
  if (!row.oidc_subject && !row.oidc_issuer) return true;
  return row.oidc_subject === subject && row.oidc_issuer === issuer;
}

/** Copies what the provider says about the user (e-mail unless another account has it, name, picture) and binds the identity. */
async function syncAccount(db: Db, row: AccountRow, who: OidcIdentity, issuer: string, link: boolean): Promise<void> {
  const changes: Partial<Pick<AccountRow, 'email' | 'name' | 'avatar_url' | 'provisioning_method' | 'oidc_subject' | 'oidc_issuer'>> = {};
  if (who.email && who.email !== row.email && (await emailFree(db, who.email, row.id))) changes.email = who.email;
  if (who.name && who.name !== row.name) changes.name = who.name;
  if (who.pictureUrl && who.pictureUrl !== row.avatar_url) changes.avatar_url = who.pictureUrl;
  if (!row.oidc_subject) changes.oidc_subject = who.subject;
  if (!row.oidc_issuer) changes.oidc_issuer = issuer;
  if (link && row.provisioning_method !== 'OIDC') changes.provisioning_method = 'OIDC';
  if (Object.keys(changes).length > 0) await db.updateTable('users').set(changes).where('id', '=', row.id).execute();
}

const accountOf = (row: AccountRow, outcome: OidcAccount['outcome']): OidcAccount => ({
  id: row.id,
  username: row.username,
  isDefaultPassword: row.is_default_password === 1,
  outcome,
  linkedLocalAccount: outcome === 'linked' && row.provisioning_method !== 'OIDC',
});

async function provision(db: Db, who: OidcIdentity, issuer: string, settings: AutoProvisioning): Promise<number> {
  const known = new Set((await db.selectFrom('library').select('id').execute()).map((l) => l.id));
  const email = who.email && (await emailFree(db, who.email)) ? who.email : null;
  const id = await createUser(db, {
    username: who.username,
    // Never used: OIDC users sign in at their provider. Random so nobody can guess it.
    password: randomBytes(24).toString('base64url'),
    name: who.name ?? who.username,
    email,
    permissions: { ...defaultPermissions(settings.defaultPermissions), admin: false },
    libraryIds: settings.defaultLibraryIds.filter((libraryId) => known.has(libraryId)),
    isDefaultPassword: false,
    provisioningMethod: 'OIDC',
  });
  await db.updateTable('users').set({ oidc_subject: who.subject, oidc_issuer: issuer, avatar_url: who.pictureUrl }).where('id', '=', id).execute();
  return id;
}

async function linkable(db: Db, who: OidcIdentity, issuer: string, settings: AutoProvisioning): Promise<AccountRow | undefined> {
  const named = await findUserByName(db, who.username);
  if (!named) return undefined;
  const row = await byId(db, named.id);
  if (row.provisioning_method !== 'OIDC' && !settings.allowLocalAccountLinking) throw settings.enabled ? usernameTaken(who.username) : notProvisioned(who.username);
  if (!bindable(row, issuer, who.subject)) throw usernameTaken(who.username);
  return row;
}

export async function findOrProvisionAccount(db: Db, who: OidcIdentity, issuer: string, settings: AutoProvisioning): Promise<OidcAccount> {
  const bound = await byIdentity(db, issuer, who.subject);
  if (bound) {
    await syncAccount(db, bound, who, issuer, false);
    return accountOf(bound, 'bound');
  }
  const named = await linkable(db, who, issuer, settings);
  if (named) {
    await syncAccount(db, named, who, issuer, true);
    return accountOf(named, 'linked');
  }
  if (!settings.enabled) throw notProvisioned(who.username);
  try {
    return accountOf(await byId(db, await provision(db, who, issuer, settings)), 'provisioned');
  } catch (error) {
    // A concurrent sign-in of the same person created the account first: use it.
    if (!(error instanceof UserError && error.code === 'CONFLICT')) throw error;
    const winner = (await byIdentity(db, issuer, who.subject)) ?? (await linkable(db, who, issuer, settings));
    if (!winner) throw usernameTaken(who.username);
    await syncAccount(db, winner, who, issuer, true);
    return accountOf(winner, 'linked');
  }
}

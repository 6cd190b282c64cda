// OIDC group mappings: a group name the provider sends, and the admin flag, permissions (entity-style names such as
// `permissionUpload`) and libraries its members get. Grimmory's OidcGroupMapping.
import type { Db } from '../../store/store.ts';
import { OidcError } from './oidc-error.ts';

export interface GroupMapping {
  id: number;
  oidcGroupClaim: string;
  isAdmin: boolean;
  permissions: string[];
  libraryIds: number[];
  description: string | null;
}

export interface GroupMappingInput {
  oidcGroupClaim: string | null;
  isAdmin: boolean;
  permissions: string[] | null;
  libraryIds: number[] | null;
  description: string | null;
}

interface Row {
  id: number;
  oidc_group_claim: string;
  is_admin: number;
  permissions: string | null;
  library_ids: string | null;
  description: string | null;
}

function listOf<T>(json: string | null, keep: (v: unknown) => v is T): T[] {
  if (!json || json.trim() === '') return [];
  try {
    const parsed = JSON.parse(json) as unknown;
    return Array.isArray(parsed) ? parsed.filter(keep) : [];
  } catch {
    return [];
  }
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isId = (v: unknown): v is number => Number.isInteger(v);

function mappingOf(row: Row): GroupMapping {
  return {
    id: row.id,
    oidcGroupClaim: row.oidc_group_claim,
    isAdmin: row.is_admin === 1,
    permissions: listOf(row.permissions, isString),
    libraryIds: listOf(row.library_ids, isId),
    description: row.description,
  };
}

const COLUMNS = ['id', 'oidc_group_claim', 'is_admin', 'permissions', 'library_ids', 'description'] as const;

/** The same data conflict Grimmory reports for a missing or repeated group name (its database refuses the row). */
const conflict = (): OidcError => new OidcError('GROUP_MAPPING_CONFLICT', 'A data conflict occurred. The operation could not be completed.');
const notFound = (): OidcError => new OidcError('GROUP_MAPPING_NOT_FOUND', 'OIDC group mapping not found');

function columnsOf(input: GroupMappingInput): Omit<Row, 'id'> {
  const claim = input.oidcGroupClaim;
  if (claim === null || claim === '') throw conflict();
  return {
    oidc_group_claim: claim,
    is_admin: input.isAdmin ? 1 : 0,
    permissions: JSON.stringify(input.permissions ?? []),
    library_ids: JSON.stringify(input.libraryIds ?? []),
    description: input.description,
  };
}

async function claimTaken(db: Db, claim: string, exceptId?: number): Promise<boolean> {
  let query = db.selectFrom('oidc_group_mapping').select('id').where('oidc_group_claim', '=', claim);
  if (exceptId !== undefined) query = query.where('id', '!=', exceptId);
  return (await query.executeTakeFirst()) !== undefined;
}

export async function listGroupMappings(db: Db): Promise<GroupMapping[]> {
  const rows = await db.selectFrom('oidc_group_mapping').select(COLUMNS).orderBy('id').execute();
  return rows.map(mappingOf);
}

/** The mappings for any of these group names. */
export async function mappingsForGroups(db: Db, groups: readonly string[]): Promise<GroupMapping[]> {
  if (groups.length === 0) return [];
  const rows = await db.selectFrom('oidc_group_mapping').select(COLUMNS).where('oidc_group_claim', 'in', [...groups]).orderBy('id').execute();
  return rows.map(mappingOf);
}

export async function createGroupMapping(db: Db, input: GroupMappingInput): Promise<GroupMapping> {
  const values = columnsOf(input);
  return db.transaction().execute(async (trx) => {
    if (await claimTaken(trx, values.oidc_group_claim)) throw conflict();
    const row = await trx.insertInto('oidc_group_mapping').values(values).returning(COLUMNS).executeTakeFirstOrThrow();
    return mappingOf(row);
  });
}

export async function updateGroupMapping(db: Db, id: number, input: GroupMappingInput): Promise<GroupMapping> {
  return db.transaction().execute(async (trx) => {
    const existing = await trx.selectFrom('oidc_group_mapping').select('id').where('id', '=', id).executeTakeFirst();
    if (!existing) throw notFound();
    const values = columnsOf(input);
    if (await claimTaken(trx, values.oidc_group_claim, id)) throw conflict();
    const row = await trx
      .updateTable('oidc_group_mapping')
      .set({ ...values, updated_at: new Date().toISOString() })
      .where('id', '=', id)
      .returning(COLUMNS)
      .executeTakeFirstOrThrow();
    return mappingOf(row);
  });
}

/** Deletes the mapping and returns what it was. */
export async function deleteGroupMapping(db: Db, id: number): Promise<GroupMapping> {
  const row = await db.deleteFrom('oidc_group_mapping').where('id', '=', id).returning(COLUMNS).executeTakeFirst();
  if (!row) throw notFound();
  return mappingOf(row);
}

// Magic shelf rules name libraries and shelves by id; after an import those ids may differ.
import type { IdMap } from '../id-map.ts';

type Json = unknown;

const ID_FIELDS: Record<string, string> = { library: 'library', shelf: 'shelf' };

async function remapValue(value: Json, kind: string, ids: IdMap): Promise<Json> {
  if (Array.isArray(value)) return Promise.all(value.map((v) => remapValue(v, kind, ids)));
  if (typeof value !== 'number' && typeof value !== 'string') return value;
  const mapped = await ids.get(kind, value);
  if (mapped === undefined) return value;
  return typeof value === 'string' ? String(mapped) : mapped;
}

async function remapGroup(node: Json, ids: IdMap): Promise<Json> {
  if (!node || typeof node !== 'object' || Array.isArray(node)) return node;
  const object = node as Record<string, Json>;
  if (Array.isArray(object.rules)) return { ...object, rules: await Promise.all(object.rules.map((r) => remapGroup(r, ids))) };
  const kind = typeof object.field === 'string' ? ID_FIELDS[object.field] : undefined;
  if (!kind) return node;
  return { ...object, value: await remapValue(object.value, kind, ids) };
}

/** The filter JSON with library and shelf ids replaced by the catalog's; text that is not JSON is left as it is. */
export async function remapMagicShelfFilter(filterJson: string, ids: IdMap): Promise<string> {
  let parsed: Json;
  try {
    parsed = JSON.parse(filterJson) as Json;
  } catch {
    return filterJson;
  }
  return JSON.stringify(await remapGroup(parsed, ids));
}

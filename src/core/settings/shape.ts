// A small description language for the JSON settings objects: what each property holds, what a missing or null
// property becomes (as Grimmory's Java classes behave when read), and how to check a value a client sends.
export type Shape =
  /** Java primitive boolean: never null; `missing` is the field initializer; `skipNull` keeps it for an explicit null too. */
  | { kind: 'boolean'; missing?: boolean; skipNull?: boolean }
  /** Java primitive int / double. */
  | { kind: 'int' | 'double'; missing?: number; skipNull?: boolean }
  /** Boxed Boolean / Integer / Long / Double, String and enums: nullable, null when missing. */
  | { kind: 'Boolean' | 'Integer' | 'Double' | 'string' }
  | { kind: 'enum'; values: readonly string[]; missing?: string }
  /** A nested object; `instance` makes a missing property a fresh default object instead of null. */
  | { kind: 'object'; fields: Readonly<Record<string, Shape>>; missing?: 'instance'; computed?: (value: Record<string, unknown>) => Record<string, unknown> }
  | { kind: 'list'; of: Shape };

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Problems with a client-sent value, as `path: message` lines; empty when the value fits. */
export function check(shape: Shape, value: unknown, path: string): string[] {
  if (value === null || value === undefined) return [];
  const where = path || 'value';
  switch (shape.kind) {
    case 'boolean':
    case 'Boolean':
      return typeof value === 'boolean' ? [] : [`${where}: must be a boolean`];
    case 'int':
    case 'Integer':
      return typeof value === 'number' && Number.isSafeInteger(value) ? [] : [`${where}: must be a whole number`];
    case 'double':
    case 'Double':
      return typeof value === 'number' && Number.isFinite(value) ? [] : [`${where}: must be a number`];
    case 'string':
      return typeof value === 'string' ? [] : [`${where}: must be a string`];
    case 'enum':
      return typeof value === 'string' && shape.values.includes(value) ? [] : [`${where}: must be one of ${shape.values.join(', ')}`];
    case 'list':
      return Array.isArray(value) ? value.flatMap((item, i) => check(shape.of, item, `${path}[${i}]`)) : [`${where}: must be an array`];
    case 'object':
      if (!isObject(value)) return [`${where}: must be an object`];
      return Object.entries(shape.fields).flatMap(([name, field]) => check(field, value[name], path ? `${path}.${name}` : name));
  }
}

function missingValue(shape: Shape): unknown {
  switch (shape.kind) {
    case 'boolean':
      return shape.missing ?? false;
    case 'int':
    case 'double':
      return shape.missing ?? 0;
    case 'enum':
      return shape.missing ?? null;
    case 'object':
      return shape.missing === 'instance' ? conform(shape, {}) : null;
    default:
      return null;
  }
}

function nullValue(shape: Shape): unknown {
  if (shape.kind === 'boolean') return shape.skipNull ? (shape.missing ?? false) : false;
  if (shape.kind === 'int' || shape.kind === 'double') return shape.skipNull ? (shape.missing ?? 0) : 0;
  return null;
}

/**
 * The value as Grimmory would hold it after reading: every declared property present, unknown ones dropped,
 * missing and null properties replaced as the Java class does. Assumes `check` found nothing wrong.
 */
export function conform(shape: Shape, value: unknown): unknown {
  if (value === undefined) return missingValue(shape);
  if (value === null) return nullValue(shape);
  if (shape.kind === 'list') return Array.isArray(value) ? value.map((item) => conform(shape.of, item)) : null;
  if (shape.kind !== 'object') return value;
  if (!isObject(value)) return null;
  const out: Json = {};
  for (const [name, field] of Object.entries(shape.fields)) out[name] = conform(field, value[name]);
  return shape.computed ? { ...out, ...shape.computed(out) } : out;
}

/** Shorthands for declaring shapes. */
export const bool = (missing = false, skipNull = false): Shape => ({ kind: 'boolean', missing, skipNull });
export const int = (missing = 0, skipNull = false): Shape => ({ kind: 'int', missing, skipNull });
export const str: Shape = { kind: 'string' };
export const nullableBool: Shape = { kind: 'Boolean' };
export const nullableInt: Shape = { kind: 'Integer' };
export const oneOf = (values: readonly string[], missing?: string): Shape => ({ kind: 'enum', values, ...(missing ? { missing } : {}) });
export const object = (fields: Record<string, Shape>, extra: Partial<{ missing: 'instance'; computed: (value: Json) => Json }> = {}): Shape => ({ kind: 'object', fields, ...extra });
export const listOf = (of: Shape): Shape => ({ kind: 'list', of });

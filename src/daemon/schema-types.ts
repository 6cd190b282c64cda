// Schema pieces the route groups share (each group is its own lazily loaded module, so they live apart from all).
import Type, { type Static, type TSchema } from 'typebox';

/**
 * An optional `T | null` property. Written as one JSON-schema type list rather than anyOf where `T` has a single
 * type: with type coercion on, an anyOf tries `T` first and turns null into 0, "" or [0] before the null branch is
 * reached. A `T` without a single type (a union of literals) keeps the anyOf.
 */
export function nullable<T extends TSchema>(schema: T) {
  const { type, enum: values } = schema as { type?: unknown; enum?: unknown[] };
  if (typeof type !== 'string') return Type.Optional(Type.Union([schema, Type.Null()]));
  return Type.Optional(Type.Unsafe<Static<T> | null>({ ...schema, type: [type, 'null'], ...(values ? { enum: [...values, null] } : {}) }));
}

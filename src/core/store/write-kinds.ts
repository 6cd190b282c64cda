// Writes that are not changes of the catalog's content: reading state (Store.readingState) and bookkeeping
// (Store.bookkeeping.db: Kobo sync snapshots and the like). Every query built through a Kysely that carries a
// WriteKindPlugin is marked with its kind, and both engines' drivers file the rows such a statement changes under that
// kind's generation instead of the catalog's, so that the caches kept under the catalog's generation stay put.
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';

export type WriteKind = 'reading' | 'bookkeeping';

/** Query nodes executed through a marked Kysely, by kind. */
const kinds = new WeakMap<object, WriteKind>();

/** The kind a compiled query was marked with; undefined for the catalog's own statements. */
export function writeKindOf(query: { query: object }): WriteKind | undefined {
  return kinds.get(query.query);
}

/** Marks a compiled raw statement (kyselyExec over a marked Kysely) as being of `kind`. */
export function markWriteKind(kind: WriteKind): <Q extends { query: object }>(query: Q) => Q {
  return (query) => {
    kinds.set(query.query, kind);
    return query;
  };
}

/** Marks every query built through the Kysely it is added to (and its transactions). */
export class WriteKindPlugin implements KyselyPlugin {
  readonly kind: WriteKind;
  constructor(kind: WriteKind) {
    this.kind = kind;
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    // A copy: the node object is then this query's alone, whatever else holds the original.
    const node = Object.freeze({ ...args.node });
    kinds.set(node, this.kind);
    return node;
  }

  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(args.result);
  }
}

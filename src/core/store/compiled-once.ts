// Statements of a request path built with Kysely once per owner (a cached principal, shared by every request of its
// user until the catalog changes) and shape, then only given new values: building and compiling a statement with the
// visibility filter costs more than running it on a page of 20 books.

export interface Compiled {
  sql: string;
  parameters: readonly unknown[];
}

interface Kept {
  sql: string;
  /** The parameters before the ones each use gives. */
  head: readonly unknown[];
}

const keptByOwner = new WeakMap<object, Map<string, Kept>>();
/** Shapes kept per owner (page sizes, IN-list lengths): enough for the paths that use this. */
const MAX_SHAPES = 64;

/**
 * The statement `build` makes, compiled once per owner and `shape`: later calls give only `tail`, the values of the
 * statement's last parameters (`build` must bind them last, with these values the first time). `shape` names
 * everything else the SQL depends on. Keyed by the owner object, so a principal reloaded after a change starts over.
 */
export function compiledOnce(owner: object, shape: string, tail: readonly unknown[], build: () => Compiled): Compiled {
  let kept = keptByOwner.get(owner);
  if (!kept) keptByOwner.set(owner, (kept = new Map()));
  let statement = kept.get(shape);
  if (!statement) {
    const compiled = build();
    const split = compiled.parameters.length - tail.length;
    if (split < 0 || tail.some((value, i) => compiled.parameters[split + i] !== value)) {
      throw new Error(`compiledOnce(${shape}): the statement does not end with the parameters given`);
    }
    statement = { sql: compiled.sql, head: compiled.parameters.slice(0, split) };
    if (kept.size >= MAX_SHAPES) kept.delete(kept.keys().next().value as string);
    kept.set(shape, statement);
  }
  return { sql: statement.sql, parameters: tail.length === 0 ? statement.head : [...statement.head, ...tail] };
}

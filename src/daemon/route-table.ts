// The routes the app serves: heads known at start, each group's module (handlers and schemas) loaded with the first
// request that needs it. A daemon that only ever serves KOReader sync never loads the web UI's hundreds of routes.
import { headOf, routeKey, type RouteHead } from './route-manifest.ts';
import type { RouteSpec } from './route-spec.ts';

type GroupLoader = () => Promise<RouteSpec[]>;

export class RouteTable {
  private readonly loaded = new Map<string, RouteSpec>();
  private readonly loading = new Map<string, Promise<void>>();

  readonly heads: readonly RouteHead[];
  private readonly groups: Readonly<Record<string, GroupLoader>>;

  constructor(heads: readonly RouteHead[], groups: Readonly<Record<string, GroupLoader>>) {
    this.heads = heads;
    this.groups = groups;
  }

  /** A table of routes already in memory (tests' own routes). */
  static of(specs: readonly RouteSpec[]): RouteTable {
    const table = new RouteTable(specs.map((spec) => headOf('given', spec)), { given: async () => [...specs] });
    for (const spec of specs) table.loaded.set(routeKey(spec.method, spec.url), spec);
    return table;
  }

  /** The route's spec once its group is loaded. */
  specOf(head: RouteHead): RouteSpec | undefined {
    return this.loaded.get(routeKey(head.method, head.url));
  }

  /** Loads the route's group (once, whoever asks first) and answers its spec. */
  async load(head: RouteHead): Promise<RouteSpec> {
    const ready = this.specOf(head);
    if (ready) return ready;
    let loading = this.loading.get(head.group);
    if (!loading) {
      loading = this.loadGroup(head.group);
      this.loading.set(head.group, loading);
      // A failed load (a missing chunk after an upgrade) is tried again by the next request.
      loading.catch(() => this.loading.delete(head.group));
    }
    await loading;
    const spec = this.specOf(head);
    if (!spec) throw new Error(`route ${routeKey(head.method, head.url)} is in the manifest but not in its module "${head.group}"; run scripts/gen-route-manifest.ts`);
    return spec;
  }

  /** Every route's spec, in the table's order (the API docs, eager compilation). */
  async loadAll(): Promise<RouteSpec[]> {
    return Promise.all(this.heads.map((head) => this.load(head)));
  }

  private async loadGroup(group: string): Promise<void> {
    const loader = this.groups[group];
    if (!loader) throw new Error(`no route group "${group}"`);
    for (const spec of await loader()) this.loaded.set(routeKey(spec.method, spec.url), spec);
  }
}

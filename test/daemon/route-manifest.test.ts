import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { headOf, renderManifest } from '../../src/daemon/route-manifest.ts';
import { RouteTable } from '../../src/daemon/route-table.ts';
import type { RouteSpec } from '../../src/daemon/route-spec.ts';
import { routeGroups } from '../../src/daemon/routes/index.ts';
import { ROUTE_MANIFEST } from '../../src/daemon/routes/manifest.ts';

describe('the route manifest', () => {
  it('is what the route modules declare (else run scripts/gen-route-manifest.ts)', async () => {
    const heads = (await routeGroups()).flatMap(([group, specs]) => specs.map((spec) => headOf(group, spec)));
    const committed = readFileSync(new URL('../../src/daemon/routes/manifest.ts', import.meta.url), 'utf8');
    expect(committed).toBe(renderManifest(heads));
    expect(ROUTE_MANIFEST).toEqual(heads);
  });

  it('refuses a schema part it cannot stand in for', () => {
    const spec: RouteSpec = { method: 'GET', url: '/x', auth: 'public', schema: { headers: { type: 'object' } }, handler: () => null };
    expect(() => headOf('g', spec)).toThrow(/headers/);
  });
});

describe('the route table', () => {
  const spec = (url: string): RouteSpec => ({ method: 'GET', url, auth: 'public', handler: () => url });

  it('loads a group once, with its first route, however many ask at the same time', async () => {
    let loads = 0;
    const table = new RouteTable([headOf('a', spec('/one')), headOf('a', spec('/two')), headOf('b', spec('/three'))], {
      a: async () => {
        loads++;
        return [spec('/one'), spec('/two')];
      },
      b: async () => [spec('/three')],
    });
    expect(table.specOf(table.heads[0]!)).toBeUndefined();
    const [one, two] = await Promise.all([table.load(table.heads[0]!), table.load(table.heads[1]!)]);
    expect([one.url, two.url, loads]).toEqual(['/one', '/two', 1]);
    expect(table.specOf(table.heads[2]!)).toBeUndefined();
  });

  it('says which route the manifest has and its module lacks, and tries a failed group again', async () => {
    let attempt = 0;
    const table = new RouteTable([headOf('a', spec('/gone'))], {
      a: async () => {
        if (++attempt === 1) throw new Error('chunk missing');
        return [spec('/other')];
      },
    });
    await expect(table.load(table.heads[0]!)).rejects.toThrow('chunk missing');
    await expect(table.load(table.heads[0]!)).rejects.toThrow(/GET \/gone is in the manifest but not in its module "a"/);
  });
});

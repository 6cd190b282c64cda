// Regenerates src/daemon/routes/manifest.ts from the route modules: `node scripts/gen-route-manifest.ts`.
import { writeFileSync } from 'node:fs';
import { headOf, renderManifest } from '../src/daemon/route-manifest.ts';
import { routeGroups } from '../src/daemon/routes/index.ts';

const heads = (await routeGroups()).flatMap(([group, specs]) => specs.map((spec) => headOf(group, spec)));
writeFileSync(new URL('../src/daemon/routes/manifest.ts', import.meta.url), renderManifest(heads));
console.log(`wrote ${heads.length} routes`);

// bindery db check
import type { Command } from 'commander';
import { EXIT } from './exit-codes.ts';
import type { RunCommand } from './run.ts';

export function registerDbCheck(parent: Command, run: RunCommand): void {
  parent
    .command('check')
    .description("check the catalog's integrity: broken pages or indexes (SQLite), rows pointing at missing rows, id sequences, migrations")
    .action(() =>
      run(async (ctx) => {
        const { openStore } = await import('../core/store/store.ts');
        const { checkCatalog } = await import('../core/store/integrity.ts');
        const { redactedLocation } = await import('../core/store/engine.ts');
        // Read-only: a check changes nothing, not even pending migrations.
        const store = await openStore(ctx.paths.catalog, { readonly: true, poolSize: 2 });
        const report = await checkCatalog(store).finally(() => store.close());
        const catalog = redactedLocation(ctx.paths.catalog);
        const ok = report.problems.length === 0;
        if (ctx.json) ctx.printJson({ catalog, ok, ...report });
        else if (ok) ctx.print(`${catalog} (${report.engine}): OK — ${report.checks.join(', ')}`);
        else {
          ctx.print(`${catalog} (${report.engine}): ${report.problems.length} problems`);
          for (const p of report.problems) ctx.print(`  ${p.check}: ${p.message}`);
        }
        return ok ? EXIT.OK : EXIT.DAMAGED;
      }),
    );
}

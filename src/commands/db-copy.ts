// bindery db copy --to <postgres://… | FILE> [--force] [--compare]
import type { Command } from 'commander';
import type { CatalogCopyError } from '../core/store/catalog-copy.ts';
import { redactedLocation } from '../core/store/engine.ts';
import { withCliErrors } from './coded-cli-error.ts';
import { CliError, EXIT } from './exit-codes.ts';
import type { RunCommand } from './run.ts';
import { statusLine } from './status-line.ts';

const EXIT_BY_CODE: Record<CatalogCopyError['code'], number> = {
  NOT_EMPTY: EXIT.CONFLICT,
  SCHEMA_MISMATCH: EXIT.CONFLICT,
  CHECKSUM_MISMATCH: EXIT.DAMAGED,
  COPY_FAILED: EXIT.FAILURE,
};

export function registerDbCopy(parent: Command, run: RunCommand): void {
  parent
    .command('copy')
    .description('copy the whole catalog to a PostgreSQL database or a SQLite file, checking row counts and checksums of every table')
    .requiredOption('--to <target>', 'postgres://user:password@host:port/database, or the path of a SQLite file')
    .option('--force', 'replace whatever the target already holds', false)
    .option('--compare', 'copy nothing: compare every table with the target (exit 7 when they differ)', false)
    .action((flags: { to: string; force: boolean; compare: boolean }) =>
      run(async (ctx) => {
        const { CatalogCopyError } = await import('../core/store/catalog-copy.ts');
        const { compareCatalogWith, copyCatalogTo, sameLocation } = await import('../core/store/copy-target.ts');
        if (sameLocation(ctx.paths.catalog, flags.to)) throw new CliError('INVALID_ARGUMENT', 'the target is the catalog itself', EXIT.USAGE);
        const source = await ctx.store();
        const from = redactedLocation(ctx.paths.catalog);
        const to = redactedLocation(flags.to);
        const started = performance.now();

        if (flags.compare) {
          const status = await statusLine(ctx, `comparing with ${to}`);
          const comparison = await withCliErrors(CatalogCopyError, 'COPY_', EXIT_BY_CODE, () => compareCatalogWith(source, flags.to)).finally(() => status.stop());
          const same = comparison.differences.length === 0;
          if (ctx.json) ctx.printJson({ source: from, target: to, same, differences: comparison.differences, tables: comparison.tables });
          else if (same) ctx.print(`${to} holds the same rows as ${from} (${comparison.tables.length} tables, ${comparison.tables.reduce((n, t) => n + t.rows, 0)} rows)`);
          else for (const line of [`${to} differs from ${from}:`, ...comparison.differences.map((d) => `  ${d}`)]) ctx.print(line);
          return same ? EXIT.OK : EXIT.DAMAGED;
        }

        const status = await statusLine(ctx, `copying the catalog to ${to}`);
        const result = await withCliErrors(CatalogCopyError, 'COPY_', EXIT_BY_CODE, () =>
          copyCatalogTo(source, flags.to, {
            replace: flags.force,
            onProgress: (p) => status.update(`${p.phase === 'copying' ? 'copying' : 'checking'} ${p.table}: ${p.done} of ${p.total} rows`),
          }),
        ).finally(() => status.stop());
        const durationMs = Math.round(performance.now() - started);
        if (ctx.json) {
          ctx.printJson({ source: from, target: to, schema: result.schema, rows: result.rows, tables: result.tables, durationMs });
          return;
        }
        ctx.print(`copied ${result.rows} rows in ${result.tables.length} tables from ${from} to ${to}; every table's row count and checksum match (${(durationMs / 1000).toFixed(1)} s)`);
      }),
    );
}

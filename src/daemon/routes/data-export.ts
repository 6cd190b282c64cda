// Bindery extension: the signed-in user downloads an export of their own data (the archive of `bindery export --user`,
// docs/backup.md). Written to a work file first, so a failure answers with an error instead of a cut-short download.
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { attachmentDisposition } from '../../core/media/content-types.ts';
import { principalOf } from '../authenticate.ts';
import type { RouteSpec } from '../route-spec.ts';

export const dataExportRoutes: RouteSpec[] = [
  {
    method: 'GET',
    url: '/api/v1/bindery/export',
    auth: 'jwt-or-query',
    rule: 'any',
    handler: async (request, reply, ctx) => {
      const { createExport } = await import('../../core/export/write-export.ts');
      const principal = principalOf(request);
      const path = join(ctx.paths.tmp, `export-${randomUUID()}.tar.gz`);
      await createExport({ catalogPath: ctx.paths.catalog, users: [principal.username], target: path, workDir: ctx.paths.tmp });
      const stream = createReadStream(path);
      stream.once('close', () => void rm(path, { force: true }));
      const day = new Date().toISOString().slice(0, 10);
      return reply
        .header('Content-Type', 'application/gzip')
        .header('Content-Disposition', attachmentDisposition(`bindery-export-${principal.username}-${day}.tar.gz`))
        .send(stream);
    },
  },
];

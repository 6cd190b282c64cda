// `bindery backup`: one archive with a consistent copy of the catalog and the data directory's folders, written
// under a hidden temporary name beside its target, synced, then renamed: an archive with the final name is complete.
import { createReadStream, createWriteStream, existsSync, statSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { VERSION } from '../../version.ts';
import { addBuffer, partialPath, removeAbandoned, Spool, writeArchive, type WorkSite } from './archive-file.ts';
import {
  BACKUP_FORMAT, BACKUP_FORMAT_VERSION, BackupError, backupFileName, CATALOG_MEMBER, CONFIG_MEMBER, DATA_SECTIONS, MANIFEST_MEMBER, MEMBERS_LIST,
  memberLine, type BackupManifest, type DataSection,
} from './backup-format.ts';
import { catalogFacts } from './catalog-facts.ts';
import { snapshotCatalog } from '../store/catalog-snapshot.ts';
import { embeddedCatalogFile, openStore } from '../store/store.ts';
import { workMark } from '../work-files.ts';
import { filesBelow, openMember } from './data-files.ts';
import type { TarWriter } from './tar.ts';

export interface BackupProgress {
  phase: 'catalog' | 'files' | 'finishing';
  /** catalog: pages (SQLite) or rows (PostgreSQL) copied of total; files: members written so far. */
  done: number;
  total: number | null;
  bytes: number;
}

export interface CreateBackupInput {
  dataDir: string;
  /** The catalog: its SQLite file, or its postgres:// URL. */
  catalogPath: string;
  /** A folder (the archive gets a dated name in it) or a file name. */
  target: string;
  /** The config file in use, carried as settings/config.json. */
  configFile?: string | undefined;
  onProgress?: (progress: BackupProgress) => void;
  /** Checked between members; a cancelled backup leaves nothing behind. */
  isCancelled?: () => boolean;
  now?: Date;
  /** Names the archive as a scheduled one (which retention may delete later). */
  scheduled?: boolean;
}

export interface BackupResult {
  path: string;
  bytes: number;
  createdAt: string;
  members: number;
  tables: Record<string, number>;
  sections: Record<DataSection, { files: number; bytes: number }>;
  durationMs: number;
}

/** The archive's final path: a folder (existing, or named with a trailing slash) gets a dated file name. */
export function backupTargetPath(target: string, now: Date, scheduled = false): string {
  const absolute = resolve(target);
  const isDir = target.endsWith('/') || (existsSync(absolute) && statSync(absolute).isDirectory());
  return isDir ? join(absolute, backupFileName(now, scheduled)) : absolute;
}

export async function createBackup(input: CreateBackupInput): Promise<BackupResult> {
  const started = performance.now();
  const now = input.now ?? new Date();
  const finalPath = backupTargetPath(input.target, now, input.scheduled);
  const targetDir = dirname(finalPath);
  await mkdir(targetDir, { recursive: true }).catch((error: unknown) => {
    throw new BackupError('INVALID_TARGET', `cannot create the backup folder ${targetDir}: ${(error as Error).message}`);
  });
  const catalogFile = embeddedCatalogFile(input.catalogPath);
  if (catalogFile !== undefined && !existsSync(catalogFile)) throw new BackupError('NOT_FOUND', `there is no catalog at ${input.catalogPath}`);
  const workDir = join(input.dataDir, 'tmp');
  await mkdir(workDir, { recursive: true });
  // Opened only to tell its work files apart from those of other processes sharing the data directory.
  const store = await openStore(input.catalogPath, { readonly: true, poolSize: 1 });
  try {
    return await backupInto(input, finalPath, workDir, { liveness: store.liveness, mark: await workMark(store.liveness) }, now, started);
  } finally {
    await store.close();
  }
}

async function backupInto(input: CreateBackupInput, finalPath: string, workDir: string, site: WorkSite, now: Date, started: number): Promise<BackupResult> {
  await removeAbandoned(workDir, site.liveness);
  const catalogCopy = partialPath(workDir, 'catalog-backup', site.mark);
  const catalogGzip = partialPath(workDir, 'catalog-backup-gz', site.mark);
  const listFile = partialPath(workDir, 'members-backup', site.mark);
  let bytesWritten = 0;
  const report = (phase: BackupProgress['phase'], done: number, total: number | null): void => input.onProgress?.({ phase, done, total, bytes: bytesWritten });
  const cancelled = (): void => {
    if (input.isCancelled?.()) throw new BackupError('CANCELLED', 'the backup was cancelled');
  };

  try {
    await snapshotCatalog(input.catalogPath, catalogCopy, (p) => report('catalog', p.done, p.total));
    const facts = catalogFacts(catalogCopy);
    const configFile = input.configFile && existsSync(input.configFile) ? resolve(input.configFile) : null;
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      formatVersion: BACKUP_FORMAT_VERSION,
      createdAt: now.toISOString(),
      binderyVersion: VERSION,
      catalog: { schema: facts.schema, tables: facts.tables },
      sections: [...DATA_SECTIONS],
      configFile,
    };

    // members.jsonl grows with the archive: its lines wait in a file until the last member.
    const list = new Spool(listFile);
    let members = 0;
    const record = async (path: string, size: number, sha256: string): Promise<void> => {
      await list.add(memberLine({ path, size, sha256 }));
      members++;
      bytesWritten += size;
    };
    const addMember = async (tar: TarWriter, path: string, absolute: string): Promise<number | undefined> => {
      const opened = await openMember(absolute);
      if (!opened) return undefined;
      try {
        await tar.add({ path, size: opened.size, sha256: opened.sha256, mtimeMs: opened.mtimeMs }, opened.body);
      } finally {
        await opened.close();
      }
      await record(path, opened.size, opened.sha256);
      return opened.size;
    };

    // The catalog compresses well, covers do not: the catalog alone is compressed, before archiving.
    await pipeline(createReadStream(catalogCopy), createGzip({ level: 6 }), createWriteStream(catalogGzip, { flags: 'w' }));
    await rm(catalogCopy, { force: true });

    const written = await writeArchive(finalPath, { gzip: false, site }, async (tar) => {
      const manifestMember = await addBuffer(tar, MANIFEST_MEMBER, `${JSON.stringify(manifest, null, 2)}\n`);
      await record(MANIFEST_MEMBER, manifestMember.size, manifestMember.sha256);
      if ((await addMember(tar, CATALOG_MEMBER, catalogGzip)) === undefined) throw new BackupError('CATALOG_INVALID', 'the catalog copy vanished while it was archived');
      await rm(catalogGzip, { force: true });
      if (configFile) await addMember(tar, CONFIG_MEMBER, configFile);

      const sections = Object.fromEntries(DATA_SECTIONS.map((s) => [s, { files: 0, bytes: 0 }])) as BackupResult['sections'];
      let lastReport = 0;
      for (const section of DATA_SECTIONS) {
        for await (const file of filesBelow(join(input.dataDir, section), section)) {
          const size = await addMember(tar, file.path, file.absolute);
          if (size === undefined) continue;
          sections[section].files++;
          sections[section].bytes += size;
          if (members - lastReport >= 200) {
            lastReport = members;
            cancelled();
            report('files', members, null);
          }
        }
      }

      report('finishing', members, members);
      await list.addTo(tar, MEMBERS_LIST);
      return sections;
    }).finally(() => list.close().catch(() => undefined));
    return { path: finalPath, bytes: written.bytes, createdAt: manifest.createdAt, members: members + 1, tables: facts.tables, sections: written.value, durationMs: Math.round(performance.now() - started) };
  } finally {
    await Promise.all([rm(catalogCopy, { force: true }), rm(catalogGzip, { force: true }), rm(listFile, { force: true })]);
  }
}

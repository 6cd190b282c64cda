// `bindery restore`: the archive is read and checked in full into a staging folder inside the data directory; only
// when every checksum matched and the restored catalog opened and passed `PRAGMA integrity_check` are the current
// catalog and folders moved aside (into `pre-restore-<time>/`) and the restored ones moved in. Book files live in the
// libraries' folders and are never touched. A catalog on PostgreSQL cannot be moved as a file: a SQLite copy of it
// is kept aside instead, and the archive's catalog is copied into the database in one transaction (replacing what it
// held, as the restore's confirmation said).
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { currentInstance } from '../cluster/instance.ts';
import { runningDaemon } from '../daemon-presence.ts';
import { syncDirectory } from '../file-writes.ts';
import { currentOwner, ownerAlive } from '../process-owner.ts';
import { LATEST_MIGRATION } from '../store/migrations/index.ts';
import { copyCatalog, isEmptyCatalog } from '../store/catalog-copy.ts';
import type { LeaseHolding } from '../store/leases.ts';
import { snapshotCatalog } from '../store/catalog-snapshot.ts';
import { embeddedCatalogFile, openSqliteFile, openStore, type Store } from '../store/store.ts';
import { BackupError, CATALOG_FILE, CATALOG_MEMBER, CONFIG_MEMBER, DATA_SECTIONS, type BackupManifest, type DataSection } from './backup-format.ts';
import { catalogFacts, integrityCheck } from './catalog-facts.ts';
import { readBackup } from './read-backup.ts';

export interface RestoreInput {
  dataDir: string;
  /** The catalog: its SQLite file, or its postgres:// URL. */
  catalogPath: string;
  archive: string;
  /** The config file path this installation reads (where a config file from the backup may be put back). */
  configFile?: string | undefined;
  onProgress?: (members: number, bytes: number) => void;
  /** Rows copied into a catalog on a database server. */
  onCatalogProgress?: (rows: number, total: number) => void;
}

export interface RestoreResult {
  archive: string;
  createdAt: string;
  tables: Record<string, number>;
  files: Record<DataSection, number>;
  /** Where the previous catalog and folders were moved; null when there was nothing to move. */
  previousDir: string | null;
  /** What became of the backup's config file, if it held one. */
  config: { restoredTo: string } | { keptAt: string; current: string } | null;
}

/** A server process holding a lease on the catalog now, other than this one: some `bindery serve` uses it. */
async function liveLeaseHolder(catalogPath: string): Promise<LeaseHolding | undefined> {
  const store = await openStore(catalogPath);
  const leases = store.leases(currentInstance());
  try {
    return (await leases.holdings()).find((h) => h.alive && !h.mine);
  } finally {
    await leases.close();
    await store.close();
  }
}

/**
 * Throws DAEMON_RUNNING while `bindery serve` uses the data directory (its pid file names a process running on this
 * machine) or, for a catalog on a database server, while any replica on any machine uses the catalog: every running
 * server holds the catalog's leases between them, and the pid file in a shared data directory names one process of one
 * machine at most.
 */
export async function refuseWhileDaemonRuns(dataDir: string, catalogPath: string): Promise<void> {
  const daemon = runningDaemon(dataDir);
  if (daemon) {
    throw new BackupError('DAEMON_RUNNING', `bindery serve (pid ${daemon.pid}, started ${daemon.startedAt}) is using ${dataDir}; stop it first (for example: systemctl stop bindery)`);
  }
  if (embeddedCatalogFile(catalogPath) !== undefined) return;
  const holder = await liveLeaseHolder(catalogPath);
  if (holder) {
    throw new BackupError('DAEMON_RUNNING', `bindery serve (${holder.holder}, running ${holder.lease} since ${holder.acquiredAt}) is using the catalog database; stop every replica first`);
  }
}

function stamp(at: Date): string {
  return at.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
}

/** Checks the staged catalog: opens, is whole, holds what the manifest says, and is not from a newer Bindery. */
async function checkStagedCatalog(path: string, manifest: BackupManifest): Promise<void> {
  const integrity = integrityCheck(path);
  if (integrity !== 'ok') throw new BackupError('CATALOG_INVALID', `the catalog in the archive fails integrity_check: ${integrity}`);
  const facts = catalogFacts(path);
  for (const [table, count] of Object.entries(manifest.catalog.tables)) {
    if (facts.tables[table] !== count) throw new BackupError('CATALOG_INVALID', `the catalog in the archive holds ${facts.tables[table] ?? 0} rows in ${table}, the manifest says ${count}`);
  }
  if (facts.schema > LATEST_MIGRATION) {
    throw new BackupError('UNSUPPORTED', `the backup comes from a newer Bindery (catalog schema ${facts.schema}; this one knows up to ${LATEST_MIGRATION}); restore it with that version or newer`);
  }
  // Opening migrates an older catalog to this version's schema, as the daemon would on start.
  const store = await openSqliteFile(path);
  await store.close();
  const after = integrityCheck(path);
  if (after !== 'ok') throw new BackupError('CATALOG_INVALID', `the restored catalog fails integrity_check after opening: ${after}`);
}

const CATALOG_FILES = ['', '-wal', '-shm'];

/** Staging folders of restores whose process died (kill -9, power loss) before they finished or cleaned up. */
async function removeAbandonedStaging(dataDir: string): Promise<void> {
  const me = currentOwner();
  for (const name of await readdir(dataDir).catch(() => [] as string[])) {
    const m = /^\.restore-\d{8}-\d{6}-(\d+)$/.exec(name);
    if (m && !ownerAlive({ ...me, pid: Number(m[1]) })) await rm(join(dataDir, name), { recursive: true, force: true });
  }
}

async function asidePath(previousDir: string, name: string): Promise<string> {
  await mkdir(previousDir, { recursive: true });
  return join(previousDir, name);
}

/** The staged SQLite catalog copied into the database server, replacing its rows in one transaction. */
async function copyIntoServer(stagedCatalog: string, target: Store, input: RestoreInput): Promise<void> {
  const source = await openSqliteFile(stagedCatalog);
  try {
    await copyCatalog(source, target, { replace: true, onProgress: (p) => p.phase === 'copying' && input.onCatalogProgress?.(p.done, p.total) });
  } finally {
    await source.close();
  }
}

export async function restoreBackup(input: RestoreInput): Promise<RestoreResult> {
  await refuseWhileDaemonRuns(input.dataDir, input.catalogPath);
  await removeAbandonedStaging(input.dataDir);
  const at = new Date();
  const staging = join(input.dataDir, `.restore-${stamp(at)}-${process.pid}`);
  await mkdir(staging, { recursive: true });
  const files = Object.fromEntries(DATA_SECTIONS.map((s) => [s, 0])) as Record<DataSection, number>;
  try {
    let count = 0;
    let bytes = 0;
    const verified = await readBackup(input.archive, async (member, body) => {
      const target = join(staging, member.path);
      await mkdir(dirname(target), { recursive: true });
      await pipeline(body, createWriteStream(target, { flags: 'wx' }));
      const section = member.path.split('/')[0] as DataSection;
      if (section in files) files[section]++;
      count++;
      bytes += member.size;
      input.onProgress?.(count, bytes);
    });
    const { manifest } = verified;
    // Decompressed once every checksum matched, so a damaged archive is reported as such, not as a bad gzip stream.
    const stagedCatalog = join(staging, CATALOG_FILE);
    await pipeline(createReadStream(join(staging, CATALOG_MEMBER)), createGunzip(), createWriteStream(stagedCatalog, { flags: 'wx' })).catch((error: unknown) => {
      throw new BackupError('CATALOG_INVALID', `the catalog in the archive cannot be decompressed: ${(error as Error).message}`);
    });
    await checkStagedCatalog(stagedCatalog, manifest);

    // Everything checked: the swap. A daemon that started meanwhile would lose its catalog under it.
    await refuseWhileDaemonRuns(input.dataDir, input.catalogPath);
    const previousDir = join(input.dataDir, `pre-restore-${stamp(at)}`);
    const moves: { from: string; to: string }[] = [];
    const move = async (from: string, to: string): Promise<void> => {
      await mkdir(dirname(to), { recursive: true });
      await rename(from, to);
      moves.push({ from, to });
    };
    const catalogFile = embeddedCatalogFile(input.catalogPath);
    const server = catalogFile === undefined ? await openStore(input.catalogPath, { poolSize: 2 }) : undefined;
    try {
      // The previous catalog on a server stays a database: a copy of it waits aside, as a moved file would.
      if (server && !(await isEmptyCatalog(server))) await snapshotCatalog(input.catalogPath, await asidePath(previousDir, 'bindery.sqlite'));
      if (catalogFile !== undefined) {
        for (const suffix of CATALOG_FILES) {
          const current = `${catalogFile}${suffix}`;
          if (existsSync(current)) await move(current, join(previousDir, `bindery.sqlite${suffix}`));
        }
      }
      for (const section of manifest.sections) {
        const current = join(input.dataDir, section);
        if (existsSync(current)) await move(current, join(previousDir, section));
        const staged = join(staging, section);
        if (existsSync(staged)) await move(staged, current);
      }
      if (catalogFile !== undefined) await move(stagedCatalog, catalogFile);
      if (server) await copyIntoServer(stagedCatalog, server, input);
    } catch (error) {
      const stranded: string[] = [];
      for (const { from, to } of moves.reverse()) await rename(to, from).catch(() => stranded.push(`${to} (belongs at ${from})`));
      if (stranded.length > 0 && error instanceof Error) error.message += `; these could not be put back and wait where they are: ${stranded.join(', ')}`;
      throw error;
    } finally {
      await server?.close();
    }
    await syncDirectory(input.dataDir);

    let config: RestoreResult['config'] = null;
    const stagedConfig = join(staging, CONFIG_MEMBER);
    if (existsSync(stagedConfig)) {
      // Only this installation says where its config file goes: a path written in the archive is never trusted.
      const destination = input.configFile;
      if (destination && !existsSync(destination)) {
        await mkdir(dirname(destination), { recursive: true });
        await copyFile(stagedConfig, destination);
        config = { restoredTo: destination };
      } else if (destination && (await readFile(destination, 'utf8')) === (await readFile(stagedConfig, 'utf8'))) {
        config = { restoredTo: destination };
      } else {
        // A config file in place is the administrator's: the backup's copy waits beside the previous catalog.
        const keptAt = join(previousDir, 'config.json.from-backup');
        await mkdir(previousDir, { recursive: true });
        await copyFile(stagedConfig, keptAt);
        config = { keptAt, current: destination ?? '' };
      }
    }
    return {
      archive: input.archive,
      createdAt: manifest.createdAt,
      tables: manifest.catalog.tables,
      files,
      previousDir: existsSync(previousDir) ? previousDir : null,
      config,
    };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

// The backup archive, format version 1: a POSIX tar (not compressed as a whole: covers are JPEGs already) whose
// members are, in order,
//   manifest.json            what the archive holds (below)
//   catalog/bindery.sqlite.gz  a consistent copy of the catalog (one file, rollback journal mode), gzip-compressed
//   settings/config.json     the config file in use when the backup was made, when there was one
//   covers/…, icons/…, custom-fonts/…, author-images/…   those folders of the data directory
//   members.jsonl            one line per member above: {"path","size","sha256"}
// Every member's tar (pax) header also carries its SHA-256 (BINDERY.sha256), so a reader checks each member as it
// streams past; members.jsonl lets standard tools check the files and tells a reader that nothing is missing.
import { CodedError } from '../coded-error.ts';

export const BACKUP_FORMAT = 'bindery-backup';
export const BACKUP_FORMAT_VERSION = 1;
export const MANIFEST_MEMBER = 'manifest.json';
export const CATALOG_MEMBER = 'catalog/bindery.sqlite.gz';
/** Where restore puts the decompressed catalog in its staging folder. */
export const CATALOG_FILE = 'catalog/bindery.sqlite';
export const CONFIG_MEMBER = 'settings/config.json';
export const MEMBERS_LIST = 'members.jsonl';

/** Folders of the data directory that a backup carries, by the name used in the archive and on disk. */
export const DATA_SECTIONS = ['covers', 'icons', 'custom-fonts', 'author-images'] as const;
export type DataSection = (typeof DATA_SECTIONS)[number];

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  formatVersion: number;
  createdAt: string;
  binderyVersion: string;
  catalog: {
    /** The newest migration applied to the copied catalog. */
    schema: string;
    /** Row count of every table of the copy. */
    tables: Record<string, number>;
  };
  sections: DataSection[];
  /** Where the config file included as settings/config.json was read from; null when none was in use. */
  configFile: string | null;
}

export interface MemberRecord {
  path: string;
  size: number;
  sha256: string;
}

export type BackupErrorCode = 'NOT_FOUND' | 'DAMAGED' | 'UNSUPPORTED' | 'DAEMON_RUNNING' | 'INVALID_TARGET' | 'CATALOG_INVALID' | 'CANCELLED';

export class BackupError extends CodedError<BackupErrorCode> {}

/** The line members.jsonl holds for a member (also what a reader recomputes, byte for byte). */
export function memberLine(member: MemberRecord): string {
  return `${JSON.stringify({ path: member.path, size: member.size, sha256: member.sha256 })}\n`;
}

/** Whether an archive path may be written under the data directory: a known member, no way out of its folder. */
export function isDataMember(path: string): boolean {
  const parts = path.split('/');
  if (parts.length < 2 || parts.some((part) => part === '' || part === '.' || part === '..' || part.includes('\0') || part.includes('\\'))) return false;
  return (DATA_SECTIONS as readonly string[]).includes(parts[0] as string);
}

export function checkManifest(raw: unknown): BackupManifest {
  const m = raw as Partial<BackupManifest> | null;
  if (!m || typeof m !== 'object' || m.format !== BACKUP_FORMAT) throw new BackupError('UNSUPPORTED', 'not a Bindery backup (manifest.json names another format)');
  if (typeof m.formatVersion !== 'number' || m.formatVersion > BACKUP_FORMAT_VERSION || m.formatVersion < 1) {
    throw new BackupError('UNSUPPORTED', `backup format version ${String(m.formatVersion)} is not supported by this Bindery (it reads version ${BACKUP_FORMAT_VERSION}); use a newer Bindery`);
  }
  const tablesOk = m.catalog && typeof m.catalog.schema === 'string' && m.catalog.tables && typeof m.catalog.tables === 'object';
  const sectionsOk = Array.isArray(m.sections) && m.sections.every((s) => (DATA_SECTIONS as readonly string[]).includes(s));
  if (!tablesOk || !sectionsOk || typeof m.createdAt !== 'string') throw new BackupError('DAMAGED', 'manifest.json is incomplete');
  return m as BackupManifest;
}

/**
 * `bindery-backup-20261127-031500.tar` (`bindery-backup-auto-…` for scheduled ones, the only ones retention
 * deletes), in UTC so names sort by time wherever they are read.
 */
export function backupFileName(at: Date, scheduled = false): string {
  const stamp = at.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `bindery-backup-${scheduled ? 'auto-' : ''}${stamp}.tar`;
}

/** The time a scheduled backup's file name holds, or undefined for other files. */
export function scheduledBackupTime(name: string): Date | undefined {
  const m = /^bindery-backup-auto-(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})\.tar$/.exec(name);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s] = m;
  return new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}Z`);
}

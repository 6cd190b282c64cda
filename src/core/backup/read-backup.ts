// Reading a backup archive from start to end, checking every member's SHA-256, the member list and the format
// version; `bindery backup verify` and `bindery restore` (which extracts while it checks) both go through here.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { createGunzip } from 'node:zlib';
import {
  BackupError, CATALOG_MEMBER, checkManifest, CONFIG_MEMBER, isDataMember, MANIFEST_MEMBER, MEMBERS_LIST, memberLine, type BackupManifest,
} from './backup-format.ts';
import { readTar, readVerified, TarFormatError, verifiedBody } from './tar.ts';

export interface VerifiedBackup {
  manifest: BackupManifest;
  members: number;
  /** Uncompressed bytes of every member. */
  bytes: number;
  archiveBytes: number;
}

/** Receives each member (after the manifest) while it is read; the bytes are checked as they pass. */
export type MemberVisitor = (member: { path: string; size: number }, body: AsyncIterable<Buffer>, manifest: BackupManifest) => Promise<void>;

const MANIFEST_LIMIT = 4 * 1024 * 1024;

function damaged(error: unknown): BackupError {
  if (error instanceof BackupError) return error;
  if (error instanceof TarFormatError) return new BackupError('DAMAGED', `the archive is damaged: ${error.message}`);
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'Z_BUF_ERROR' || code === 'Z_DATA_ERROR' || code === 'ERR_STREAM_PREMATURE_CLOSE') {
    return new BackupError('DAMAGED', `the archive is damaged or cut short (${(error as Error).message})`);
  }
  throw error;
}

async function drain(body: AsyncIterable<Buffer>): Promise<void> {
  for await (const _chunk of body) {
    // only the checks matter
  }
}

async function startsWithGzipMagic(path: string): Promise<boolean> {
  const handle = await open(path, 'r');
  try {
    const head = Buffer.alloc(2);
    await handle.read(head, 0, 2, 0);
    return head[0] === 0x1f && head[1] === 0x8b;
  } finally {
    await handle.close();
  }
}

export async function readBackup(archive: string, visit?: MemberVisitor): Promise<VerifiedBackup> {
  const archiveBytes = await stat(archive).then(
    (s) => s.size,
    () => {
      throw new BackupError('NOT_FOUND', `no such archive: ${archive}`);
    },
  );
  // A backup is a plain tar; one compressed afterwards (gzip backup.tar) is read as well.
  const file = createReadStream(archive);
  const source = (await startsWithGzipMagic(archive)) ? file.pipe(createGunzip()) : file;
  let manifest: BackupManifest | undefined;
  const listed = createHash('sha256');
  let members = 0;
  let bytes = 0;
  let complete = false;
  try {
    for await (const entry of readTar(source as AsyncIterable<Buffer>)) {
      if (complete) throw new BackupError('DAMAGED', `unexpected member ${entry.path} after ${MEMBERS_LIST}`);
      if (!/^[0-9a-f]{64}$/.test(entry.sha256)) throw new BackupError('DAMAGED', `${entry.path} carries no checksum: not a Bindery backup, or a damaged one`);
      if (!manifest) {
        if (entry.path !== MANIFEST_MEMBER) throw new BackupError('UNSUPPORTED', `not a Bindery backup: the first member is ${entry.path}, not ${MANIFEST_MEMBER}`);
        const bytes = await readVerified(entry, MANIFEST_LIMIT);
        let parsed: unknown;
        try {
          parsed = JSON.parse(bytes.toString('utf8'));
        } catch {
          throw new BackupError('DAMAGED', `${MANIFEST_MEMBER} is not valid JSON`);
        }
        manifest = checkManifest(parsed);
      } else if (entry.path === MEMBERS_LIST) {
        await drain(verifiedBody(entry));
        if (entry.sha256 !== listed.digest('hex')) throw new BackupError('DAMAGED', `${MEMBERS_LIST} does not list the members the archive holds: the archive was altered`);
        complete = true;
        continue;
      } else {
        if (entry.path !== CATALOG_MEMBER && entry.path !== CONFIG_MEMBER && !isDataMember(entry.path)) throw new BackupError('DAMAGED', `unexpected member ${entry.path}`);
        if (members === 1 && entry.path !== CATALOG_MEMBER) throw new BackupError('DAMAGED', `the catalog is missing (found ${entry.path} where ${CATALOG_MEMBER} belongs)`);
        const body = verifiedBody(entry);
        if (visit) await visit({ path: entry.path, size: entry.size }, body, manifest);
        await drain(body);
      }
      listed.update(memberLine({ path: entry.path, size: entry.size, sha256: entry.sha256 }));
      members++;
      bytes += entry.size;
    }
  } catch (error) {
    source.destroy();
    file.destroy();
    throw damaged(error);
  }
  if (!manifest) throw new BackupError('DAMAGED', 'the archive is empty');
  if (!complete) throw new BackupError('DAMAGED', `the archive is cut short: ${MEMBERS_LIST} is missing`);
  return { manifest, members: members + 1, bytes, archiveBytes };
}

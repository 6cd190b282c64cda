// CB7 backend: the 7-Zip command line (`7za` from 7zip-bin, a system 7zz/7z/7za, or $BINDERY_7Z), listing with
// `l -slt` and streaming one entry with `e -so`, killed as soon as it passes the byte cap.
import { accessSync, chmodSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { path7za } from '7zip-bin';
import { execa } from 'execa';
import type { ArchiveBackend, RawArchiveEntry } from './comic-archive.ts';
import { FormatError } from './errors.ts';

const LIST_TIMEOUT_MS = 60_000;
const READ_TIMEOUT_MS = 300_000;
/** A listing is a few hundred bytes per entry; this comfortably covers LIMITS.maxEntries. */
const MAX_LISTING_BYTES = 128 * 1024 * 1024;
const MAX_STDERR_BYTES = 64 * 1024;
const SYSTEM_BINARIES = ['7zz', '7z', '7za'];

/**
 * Switches for every call: force the 7z format (the magic bytes already said so), a dummy password so an
 * encrypted archive fails instead of prompting, and UTF-8 console output for non-ASCII entry names.
 */
const COMMON_SWITCHES = ['-t7z', '-pbindery-no-password', '-sccUTF-8'];
const ENV = { LC_ALL: 'C.UTF-8', LANG: 'C.UTF-8' };

let resolvedBinary: string | undefined;

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The bundled 7za ships without its exec bit in some installs; restore it once if we may. */
function bundledBinary(): string | undefined {
  try {
    if (!statSync(path7za).isFile()) return undefined;
  } catch {
    return undefined;
  }
  if (isExecutableFile(path7za)) return path7za;
  try {
    chmodSync(path7za, 0o755);
    return isExecutableFile(path7za) ? path7za : undefined;
  } catch {
    return undefined;
  }
}

function systemBinary(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    for (const name of SYSTEM_BINARIES) {
      const candidate = join(dir, name);
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  return undefined;
}

/** $BINDERY_7Z, else the 7zip-bin binary, else the first 7-Zip on PATH. */
export function sevenZipBinary(): string {
  const override = process.env.BINDERY_7Z;
  if (override) return override;
  resolvedBinary ??= bundledBinary() ?? systemBinary();
  if (!resolvedBinary) {
    throw new FormatError('UNSUPPORTED', 'reading 7z comics needs 7-Zip: install 7zz/7z/7za or set BINDERY_7Z');
  }
  return resolvedBinary;
}

function lastLines(text: string): string {
  return text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean).slice(-3).join(' / ');
}

function failure(stderr: string, stdout: string, what: string): FormatError {
  const detail = lastLines(stderr) || lastLines(stdout) || 'no output';
  if (/password|encrypted/i.test(detail)) return new FormatError('UNSUPPORTED', `encrypted 7z archive (${detail})`);
  return new FormatError('CORRUPT', `${what}: ${detail}`);
}

/**
 * Parses `7z l -slt -ba` output: blank-line separated blocks of `Key = Value`. In a solid archive only the first
 * file of each block carries the block's packed size, so every entry gets its share of the block, proportional to
 * its size, and the ratio rules see the block's real ratio.
 */
export function parseSevenZipListing(output: string): RawArchiveEntry[] {
  const blocks: Map<string, string>[] = [];
  let current = new Map<string, string>();
  for (const line of output.split(/\r?\n/)) {
    if (line.trim() === '') {
      if (current.size > 0) blocks.push(current);
      current = new Map();
      continue;
    }
    const eq = line.indexOf(' = ');
    if (eq > 0) current.set(line.slice(0, eq).trim(), line.slice(eq + 3));
    else if (line.endsWith(' =')) current.set(line.slice(0, -2).trim(), '');
  }
  if (current.size > 0) blocks.push(current);

  const entries: (RawArchiveEntry & { block: string; packed?: number })[] = [];
  for (const fields of blocks) {
    const name = fields.get('Path');
    if (name === undefined) continue;
    const attributes = fields.get('Attributes') ?? '';
    const packed = fields.get('Packed Size');
    entries.push({
      name,
      size: Number(fields.get('Size') || 0),
      compressedSize: 0,
      isDirectory: attributes.startsWith('D') || fields.get('Folder') === '+',
      encrypted: fields.get('Encrypted') === '+',
      block: fields.get('Block') || `solo:${entries.length}`,
      ...(packed ? { packed: Number(packed) } : {}),
    });
  }

  const perBlock = new Map<string, { size: number; packed: number }>();
  for (const e of entries) {
    const total = perBlock.get(e.block) ?? { size: 0, packed: 0 };
    total.size += e.size;
    total.packed += e.packed ?? 0;
    perBlock.set(e.block, total);
  }
  return entries.map(({ block, packed: _packed, ...entry }) => {
    const total = perBlock.get(block);
    const share = total && total.size > 0 ? Math.ceil((entry.size * total.packed) / total.size) : 0;
    return { ...entry, compressedSize: share };
  });
}

async function listArchive(binary: string, path: string): Promise<RawArchiveEntry[]> {
  const result = await execa(binary, ['l', '-slt', '-ba', ...COMMON_SWITCHES, '--', path], {
    stdin: 'ignore',
    env: ENV,
    timeout: LIST_TIMEOUT_MS,
    maxBuffer: MAX_LISTING_BYTES,
    stripFinalNewline: false,
    reject: false,
  });
  if (result.isMaxBuffer) throw new FormatError('TOO_LARGE', '7z archive listing is larger than allowed');
  if (result.timedOut) throw new FormatError('TOO_LARGE', `listing the 7z archive took longer than ${LIST_TIMEOUT_MS / 1000}s`);
  if (result.failed) {
    if (result.code === 'ENOENT' || result.code === 'EACCES') {
      throw new FormatError('UNSUPPORTED', `cannot run 7-Zip (${binary}): ${result.code}`);
    }
    throw failure(result.stderr, result.stdout, 'not a readable 7z archive');
  }
  return parseSevenZipListing(result.stdout);
}

async function readEntry(binary: string, path: string, name: string, maxBytes: number): Promise<Buffer> {
  // -spd: the name is literal, not a wildcard pattern.
  const subprocess = execa(binary, ['e', '-so', '-spd', ...COMMON_SWITCHES, '--', path, name], {
    stdin: 'ignore',
    env: ENV,
    timeout: READ_TIMEOUT_MS,
    buffer: { stdout: false, stderr: true },
    maxBuffer: { stderr: MAX_STDERR_BYTES },
    encoding: 'buffer',
    reject: false,
  });
  const chunks: Buffer[] = [];
  let length = 0;
  let overflowed = false;
  let drained = false;
  try {
    for await (const chunk of subprocess.stdout as AsyncIterable<Uint8Array>) {
      length += chunk.length;
      if (length > maxBytes) {
        overflowed = true;
        break;
      }
      chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length));
    }
    drained = !overflowed;
  } finally {
    // Past the cap, or if reading the pipe failed: stop 7-Zip rather than let it inflate into a closed pipe.
    if (!drained) subprocess.kill();
  }
  const result = await subprocess;
  if (overflowed) throw new FormatError('TOO_LARGE', `entry ${name} inflates past ${maxBytes} bytes`);
  if (result.timedOut) throw new FormatError('TOO_LARGE', `extracting ${name} took longer than ${READ_TIMEOUT_MS / 1000}s`);
  if (result.failed) {
    const stderr = Buffer.isBuffer(result.stderr) || result.stderr instanceof Uint8Array ? Buffer.from(result.stderr).toString('utf8') : String(result.stderr ?? '');
    throw failure(stderr, '', `cannot extract ${name} from the 7z archive`);
  }
  return Buffer.concat(chunks, length);
}

export async function openSevenZipBackend(path: string): Promise<ArchiveBackend> {
  const binary = sevenZipBinary();
  return {
    list: () => listArchive(binary, path),
    read: (entry, maxBytes) => readEntry(binary, path, entry.name, maxBytes),
    close: async () => undefined,
  };
}

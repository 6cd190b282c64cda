// User SVG icons for shelves and libraries, one file each: `<dataDir>/icons/svg/<name>.svg`, as Grimmory keeps them.
// What is stored is the sanitized icon; what is served is sanitized again (a file may have been put there by hand),
// with the result kept in memory until the file changes.
import { springPage, type SpringPage } from '../spring-page.ts';
import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readdir, readFile, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { CodedError } from '../coded-error.ts';
import { syncDirectory } from '../file-writes.ts';
import { sanitizeSvg, SvgError, SVG_LIMITS } from './svg-sanitize.ts';

export type IconErrorCode = 'BAD_NAME' | 'INVALID' | 'EXISTS' | 'NOT_FOUND';

export class IconError extends CodedError<IconErrorCode> {}

/** Names a new icon may have (SvgIconCreateRequest's @Pattern). */
export const ICON_NAME = /^[a-zA-Z0-9-]{1,255}$/;
/** Names an existing icon is looked up by: those, `_` (Grimmory's stand-in for other characters), an optional `.svg`. */
const LOOKUP_NAME = /^([a-zA-Z0-9_-]{1,255})(\.svg)?$/;

const EXTENSION = '.svg';

export function iconDir(dataDir: string): string {
  return join(dataDir, 'icons', 'svg');
}

/** The icon's file name for a name from a URL: never a path, never a hidden file. */
function fileNameOf(name: string): string {
  const match = LOOKUP_NAME.exec(name.trim());
  if (!match) throw new IconError('BAD_NAME', 'Invalid icon name: letters, digits, - and _ only');
  return `${match[1]}${EXTENSION}`;
}

const nameOfFile = (fileName: string): string => fileName.slice(0, -EXTENSION.length);

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException).code;
}

/** Sanitized icon text by path, while its size and modification time stay the same; bounded by characters. */
class IconCache {
  private readonly entries = new Map<string, { stamp: string; svg: string }>();
  private chars = 0;
  private readonly maxChars = 8 * 1024 * 1024;

  get(path: string, stamp: string): string | undefined {
    const entry = this.entries.get(path);
    if (!entry || entry.stamp !== stamp) return undefined;
    this.entries.delete(path);
    this.entries.set(path, entry);
    return entry.svg;
  }

  set(path: string, stamp: string, svg: string): void {
    this.drop(path);
    this.entries.set(path, { stamp, svg });
    this.chars += svg.length;
    for (const [oldest] of this.entries) {
      if (this.chars <= this.maxChars) break;
      this.drop(oldest);
    }
  }

  drop(path: string): void {
    const entry = this.entries.get(path);
    if (!entry) return;
    this.chars -= entry.svg.length;
    this.entries.delete(path);
  }
}

const caches = new Map<string, IconCache>();
const cacheFor = (dir: string): IconCache => caches.get(dir) ?? caches.set(dir, new IconCache()).get(dir) as IconCache;

/**
 * Stores a new icon: sanitized, written beside its final name, flushed, then linked into place, which fails when the
 * name is taken (two uploads of one name: one wins, the other gets EXISTS). An existing icon is never replaced.
 */
export async function saveIcon(dataDir: string, name: string, svgData: string): Promise<void> {
  if (!ICON_NAME.test(name)) throw new IconError('BAD_NAME', 'Invalid icon name: letters, digits and - only');
  let clean: string;
  try {
    clean = sanitizeSvg(svgData);
  } catch (error) {
    if (error instanceof SvgError) throw new IconError('INVALID', error.message);
    throw error;
  }
  const dir = iconDir(dataDir);
  const target = join(dir, `${name}${EXTENSION}`);
  const temp = join(dir, `.${name}.${randomBytes(6).toString('hex')}.tmp`);
  await mkdir(dir, { recursive: true });
  try {
    const handle = await open(temp, 'wx');
    try {
      await handle.writeFile(clean, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await link(temp, target);
  } catch (error) {
    if (errnoCode(error) === 'EEXIST') throw new IconError('EXISTS', `SVG icon with name '${name}' already exists`);
    throw error;
  } finally {
    await unlink(temp).catch(() => undefined);
  }
  await syncDirectory(dir);
}

/** The served text of one stored icon, or undefined when it cannot be read as an SVG. */
async function servedIcon(dir: string, fileName: string): Promise<string | undefined> {
  const path = join(dir, fileName);
  const info = await stat(path).catch(() => undefined);
  if (!info?.isFile() || info.size > SVG_LIMITS.chars * 4) return undefined;
  const stamp = `${info.size}:${info.mtimeMs}`;
  const cache = cacheFor(dir);
  const cached = cache.get(path, stamp);
  if (cached !== undefined) return cached;
  try {
    const svg = sanitizeSvg(await readFile(path, 'utf8'));
    cache.set(path, stamp, svg);
    return svg;
  } catch {
    return undefined;
  }
}

export async function readIcon(dataDir: string, name: string): Promise<string> {
  const svg = await servedIcon(iconDir(dataDir), fileNameOf(name));
  if (svg === undefined) throw new IconError('NOT_FOUND', `SVG icon not found: ${name}`);
  return svg;
}

export async function deleteIcon(dataDir: string, name: string): Promise<void> {
  const dir = iconDir(dataDir);
  const path = join(dir, fileNameOf(name));
  const info = await stat(path).catch(() => undefined);
  if (!info?.isFile()) throw new IconError('NOT_FOUND', `SVG icon not found: ${name}`);
  await unlink(path).catch((error: unknown) => {
    if (errnoCode(error) === 'ENOENT') throw new IconError('NOT_FOUND', `SVG icon not found: ${name}`);
    throw error;
  });
  cacheFor(dir).drop(path);
  await syncDirectory(dir);
}

/** Stored icon file names (`name.svg`), by name: regular files with names an icon can have. */
async function iconFiles(dir: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return [];
    throw error;
  }
  return entries
    .filter((e) => e.isFile() && LOOKUP_NAME.test(e.name) && e.name.endsWith(EXTENSION))
    .map((e) => e.name)
    .sort();
}

export type IconPage = SpringPage<string>;

/** One page of icon names, by name (Spring's Page "via DTO"). */
export async function listIconNames(dataDir: string, page: number, size: number): Promise<IconPage> {
  const names = (await iconFiles(iconDir(dataDir))).map(nameOfFile);
  const from = page * size;
  return springPage(from < names.length ? names.slice(from, from + size) : [], page, size, names.length);
}

/** Every icon that reads as an SVG, name → sanitized text. */
export async function allIcons(dataDir: string): Promise<Record<string, string>> {
  const dir = iconDir(dataDir);
  const entries: [string, string][] = [];
  for (const fileName of await iconFiles(dir)) {
    const svg = await servedIcon(dir, fileName);
    if (svg !== undefined) entries.push([nameOfFile(fileName), svg]);
  }
  // Own properties whatever the name (`__proto__` included).
  return Object.fromEntries(entries);
}

// A scan limited to some folders of a library (what a folder watcher saw change): which parts of each root it walks,
// and which catalog files it answers for. Everything outside is left exactly as it is.
import { stat } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import { isSkippedName } from './walk.ts';

/** Folders below one root, `/`-separated ('' is the root itself), none inside another. */
export type RootScope = string[];

async function isFolder(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() ?? false;
}

const parentOf = (subPath: string): string => (subPath.includes('/') ? subPath.slice(0, subPath.lastIndexOf('/')) : '');

/**
 * The folders of `root` that a scan of `folders` (absolute paths) covers, or an empty list when none is under it. A
 * folder that no longer exists gives way to its nearest existing parent, so what was in it is found missing; one the
 * walk never enters (hidden, `@eaDir`, …) holds nothing to scan.
 */
export async function rootScope(root: string, folders: readonly string[]): Promise<RootScope> {
  const wanted = new Set<string>();
  for (const folder of folders) {
    const rel = relative(root, folder);
    if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) continue;
    let subPath = rel.split(sep).filter(Boolean).join('/');
    if (subPath.split('/').some((name) => name !== '' && isSkippedName(name))) continue;
    while (subPath !== '' && !(await isFolder(join(root, subPath)))) subPath = parentOf(subPath);
    wanted.add(subPath);
  }
  return foldScope([...wanted]);
}

/** Drops folders that lie inside another one of the list. */
export function foldScope(subPaths: readonly string[]): RootScope {
  if (subPaths.includes('')) return [''];
  const kept: string[] = [];
  for (const subPath of [...new Set(subPaths)].sort()) {
    if (!kept.some((k) => subPath.startsWith(`${k}/`))) kept.push(subPath);
  }
  return kept;
}

/**
 * Whether the catalog file at `subPath`/`fileName` lies in the scope: a file inside one of its folders, or a folder
 * audiobook that is one of them or inside one.
 */
export function inScope(scope: RootScope, subPath: string, fileName: string): boolean {
  const place = subPath === '' ? fileName : `${subPath}/${fileName}`;
  return scope.some((folder) => folder === '' || place === folder || place.startsWith(`${folder}/`));
}

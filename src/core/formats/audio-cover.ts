// Where an audiobook's cover comes from: a picture embedded in a track, or an image file beside the tracks.
import type { Dirent } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, parse } from 'node:path';
import type { IPicture } from 'music-metadata';
import { LIMITS } from './limits.ts';
import type { ExtractedCover } from './types.ts';

/** The front cover if the tags say which picture that is, else the first picture. */
export function embeddedCover(pictures: IPicture[] | undefined): ExtractedCover | undefined {
  if (!pictures?.length) return undefined;
  const picture = pictures.find((p) => /cover\s*\(front\)/i.test(p.type ?? '')) ?? pictures[0]!;
  if (picture.data.length === 0 || picture.data.length > LIMITS.maxEntryBytes) return undefined;
  return { data: Buffer.from(picture.data), mime: pictureMime(picture.format) };
}

/** Tag writers disagree: `image/jpeg`, `image/jpg`, `jpg`, `JPEG`. */
function pictureMime(format: string | undefined): string | undefined {
  const f = format?.trim().toLowerCase();
  if (!f) return undefined;
  if (/jpe?g$/.test(f)) return 'image/jpeg';
  if (/png$/.test(f)) return 'image/png';
  return f.includes('/') ? f : `image/${f}`;
}

const FOLDER_IMAGE_NAMES = ['cover', 'folder', 'front'];
const FOLDER_IMAGE_TYPES: Record<string, string> = { '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.png': 'image/png' };

/** `cover.jpg`, `folder.png`, `front.jpeg`… in that order of preference, any case. */
export async function folderImage(folderPath: string, entries: Dirent[]): Promise<ExtractedCover | undefined> {
  const candidates = entries
    .filter((e) => e.isFile() || e.isSymbolicLink())
    .map((e) => ({ name: e.name, stem: parse(e.name).name.toLowerCase(), mime: FOLDER_IMAGE_TYPES[extname(e.name).toLowerCase()] }))
    .filter((c) => c.mime !== undefined && FOLDER_IMAGE_NAMES.includes(c.stem))
    .sort((a, b) => FOLDER_IMAGE_NAMES.indexOf(a.stem) - FOLDER_IMAGE_NAMES.indexOf(b.stem));
  for (const candidate of candidates) {
    const path = join(folderPath, candidate.name);
    const info = await stat(path).catch(() => undefined);
    if (!info?.isFile() || info.size === 0 || info.size > LIMITS.maxEntryBytes) continue;
    return { data: await readFile(path), mime: candidate.mime };
  }
  return undefined;
}

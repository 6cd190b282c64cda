// Fonts a user uploads for the EPUB reader: at most ten per user, checked by their first bytes, kept under the data
// directory (custom-fonts/<userId>/), served back only to their owner.
import { randomUUID } from 'node:crypto';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { CodedError } from '../coded-error.ts';
import type { Db } from '../store/store.ts';

export const FONT_FORMATS = ['TTF', 'OTF', 'WOFF', 'WOFF2'] as const;
export type FontFormat = (typeof FONT_FORMATS)[number];
export const MAX_FONTS_PER_USER = 10;
export const MAX_FONT_BYTES = 10 * 1024 * 1024;
const MAX_NAME_LENGTH = 100;

export const FONT_MEDIA_TYPES: Record<FontFormat, string> = { TTF: 'font/ttf', OTF: 'font/otf', WOFF: 'font/woff', WOFF2: 'font/woff2' };

export class FontError extends CodedError<'INVALID' | 'NOT_FOUND' | 'LIMIT'> {}

export interface CustomFont {
  id: number;
  fontName: string;
  originalFileName: string;
  format: FontFormat;
  fileSize: number;
  uploadedAt: string;
}

export function fontsDir(dataDir: string, userId: number): string {
  return join(dataDir, 'custom-fonts', String(userId));
}

export function formatOfName(fileName: string): FontFormat {
  const format = extname(fileName).slice(1).toUpperCase();
  if (!(FONT_FORMATS as readonly string[]).includes(format)) throw new FontError('INVALID', 'Unsupported font format. Allowed formats: .ttf, .otf, .woff, .woff2');
  return format as FontFormat;
}

/** The format the first four bytes announce (sfnt version or WOFF signature), if any. */
export function formatOfBytes(head: Buffer): FontFormat | undefined {
  const tag = head.subarray(0, 4).toString('latin1');
  if (tag === 'wOFF') return 'WOFF';
  if (tag === 'wOF2') return 'WOFF2';
  if (tag === 'OTTO') return 'OTF';
  if (tag === '\u0000\u0001\u0000\u0000' || tag === 'true') return 'TTF';
  return undefined;
}

/** Strips markup, quotes and control characters; falls back to the file name; at most 100 characters. */
export function cleanFontName(name: string | undefined, fallback: string): string {
  const clean = (value: string): string =>
    value
      .replace(/\p{C}/gu, '')
      .replace(/<[^<>]*>/g, '')
      .replace(/[<>"'`]/g, '')
      .replace(/\s+/g, ' ')
      .trim();
  const cleaned = clean(name ?? '') || clean(fallback) || 'Font';
  return cleaned.slice(0, MAX_NAME_LENGTH).trim();
}

type Row = { id: number; font_name: string; original_file_name: string; format: string; file_size: number; uploaded_at: string; file_name: string };

const fromRow = (r: Row): CustomFont => ({ id: r.id, fontName: r.font_name, originalFileName: r.original_file_name, format: r.format as FontFormat, fileSize: r.file_size, uploadedAt: r.uploaded_at });

export async function listFonts(db: Db, userId: number): Promise<CustomFont[]> {
  return (await db.selectFrom('custom_font').selectAll().where('user_id', '=', userId).orderBy('id').execute()).map(fromRow);
}

/**
 * Adds the font already written to `tempPath` (on the data directory's file system): checks count, size and bytes,
 * moves it into place and records it. On any refusal the temporary file is removed and nothing is recorded.
 */
export async function addFont(db: Db, dataDir: string, userId: number, upload: { tempPath: string; originalFileName: string; fontName?: string }): Promise<CustomFont> {
  let placed: string | undefined;
  try {
    const format = formatOfName(upload.originalFileName);
    const { size } = await stat(upload.tempPath);
    if (size === 0) throw new FontError('INVALID', 'File is empty');
    if (size > MAX_FONT_BYTES) throw new FontError('INVALID', `File size exceeds maximum limit of ${MAX_FONT_BYTES / 1024 / 1024}MB`);
    const count = await db.selectFrom('custom_font').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow();
    if (Number(count.n) >= MAX_FONTS_PER_USER) throw new FontError('LIMIT', `Font limit exceeded. Maximum ${MAX_FONTS_PER_USER} fonts per user allowed`);
    const head = Buffer.alloc(4);
    const handle = await open(upload.tempPath, 'r');
    try {
      await handle.read(head, 0, 4, 0);
    } finally {
      await handle.close();
    }
    const detected = formatOfBytes(head);
    if (detected !== format && !(detected === 'TTF' && format === 'OTF') && !(detected === 'OTF' && format === 'TTF')) {
      throw new FontError('INVALID', `Invalid font file format. File appears to be ${detected ?? 'Unknown'} but extension indicates ${format}`);
    }
    const dir = fontsDir(dataDir, userId);
    await mkdir(dir, { recursive: true });
    const fileName = `user_${userId}_font_${randomUUID().replace(/-/g, '').slice(0, 12)}.${format.toLowerCase()}`;
    placed = join(dir, fileName);
    await rename(upload.tempPath, placed);
    const row = await db
      .insertInto('custom_font')
      .values({ user_id: userId, font_name: cleanFontName(upload.fontName, upload.originalFileName), file_name: fileName, original_file_name: upload.originalFileName.slice(0, 255), format, file_size: size })
      .returningAll()
      .executeTakeFirstOrThrow();
    placed = undefined;
    return fromRow(row);
  } finally {
    await rm(upload.tempPath, { force: true });
    if (placed) await rm(placed, { force: true });
  }
}

export async function fontFile(db: Db, dataDir: string, userId: number, fontId: number): Promise<{ path: string; format: FontFormat; fileName: string }> {
  const row = await db.selectFrom('custom_font').selectAll().where('id', '=', fontId).where('user_id', '=', userId).executeTakeFirst();
  if (!row) throw new FontError('NOT_FOUND', 'Font not found or access denied');
  return { path: join(fontsDir(dataDir, userId), row.file_name), format: row.format as FontFormat, fileName: row.original_file_name };
}

export async function deleteFont(db: Db, dataDir: string, userId: number, fontId: number): Promise<void> {
  const { path } = await fontFile(db, dataDir, userId, fontId);
  await db.deleteFrom('custom_font').where('id', '=', fontId).where('user_id', '=', userId).execute();
  await rm(path, { force: true });
}

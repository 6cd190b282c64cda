// A book's cover or thumbnail as an HTTP resource: the stored JPEG with a validator that changes with the cover.
import { stat } from 'node:fs/promises';
import type { CoverKind } from '../covers/cover-images.ts';
import { coverFile } from '../covers/cover-store.ts';
import type { Db } from '../store/store.ts';
import { placeholderCover } from './placeholder-cover.ts';

export type CoverVariant = 'cover' | 'thumbnail';

export type CoverResource =
  | { kind: 'file'; path: string; size: number; etag: string; lastModified: Date }
  | { kind: 'placeholder'; data: Buffer; etag: string };

/**
 * The cover file when there is one. Its ETag joins the cover token (`BL-…`, new with every cover) with the file's
 * size and time, so a replaced image never matches an old validator.
 */
export async function coverResource(db: Db, coversRoot: string, bookId: number, kind: CoverKind, variant: CoverVariant): Promise<CoverResource> {
  const path = coverFile(coversRoot, bookId, kind, variant);
  let info = await stat(path).catch(() => undefined);
  if (!info && variant === 'thumbnail') {
    // A scan stores covers first and makes their thumbnails after: one asked for before its turn is made now, and kept.
    const { ensureThumbnail } = await import('../covers/thumbnail-backlog.ts');
    if ((await ensureThumbnail(coversRoot, bookId, kind)) !== 'no-cover') info = await stat(path).catch(() => undefined);
  }
  if (!info?.isFile()) {
    return { kind: 'placeholder', data: await placeholderCover(), etag: '"no-cover"' };
  }
  const row = await db.selectFrom('book').select(['book_cover_hash', 'audiobook_cover_hash']).where('id', '=', bookId).executeTakeFirst();
  const token = (kind === 'audiobook' ? row?.audiobook_cover_hash : row?.book_cover_hash) ?? 'cover';
  return {
    kind: 'file',
    path,
    size: info.size,
    etag: `"${token}-${variant}-${info.size.toString(36)}-${Math.trunc(info.mtimeMs).toString(36)}"`,
    lastModified: info.mtime,
  };
}

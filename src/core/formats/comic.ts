// Comic books (CBZ, CBR, CB7): pages in reading order, ComicInfo.xml metadata, and the cover page's bytes.
import { parse } from 'node:path';
import { withComicArchive } from './comic-archive.ts';
import type { ArchiveEntry, ComicArchive } from './comic-archive.ts';
import { parseComicInfo, decodeXml } from './comic-info.ts';
import type { ComicInfo } from './comic-info.ts';
import { findComicInfo, orderPages, pageMime } from './comic-pages.ts';
import { asFormatError, FormatError } from './errors.ts';
import { LIMITS } from './limits.ts';
import { emptyComic, emptyMetadata } from './types.ts';
import type { Extraction, Extractor } from './types.ts';
import { clean } from './values.ts';

/**
 * The sidecar's metadata. A ComicInfo.xml that declares entities (UNSAFE) or is oversized (TOO_LARGE) fails the
 * book, as hostile input should; one that is merely malformed (CORRUPT, e.g. an unescaped `&` in a summary) costs
 * only the metadata, since the pages are still a readable comic.
 */
async function readComicInfo(archive: ComicArchive, entries: ArchiveEntry[], warnings: string[]): Promise<ComicInfo | undefined> {
  const name = findComicInfo(entries.map((e) => e.name));
  if (!name) return undefined;
  const xml = decodeXml(await archive.read(name, LIMITS.maxXmlBytes));
  try {
    return parseComicInfo(xml);
  } catch (error) {
    if (error instanceof FormatError && error.code === 'CORRUPT') {
      warnings.push(`${name} ignored: ${error.message}`);
      return undefined;
    }
    throw error;
  }
}

function titleFromFileName(path: string): string | undefined {
  return clean(parse(path).name);
}

export const extractComic: Extractor = async (path, options = {}) => {
  try {
    return await withComicArchive(path, async (archive) => {
      const entries = await archive.list();
      const pages = orderPages(entries.map((e) => e.name));
      if (entries.length === 0) throw new FormatError('EMPTY', 'the archive has no entries');
      if (pages.length === 0) throw new FormatError('EMPTY', 'the archive contains no page images');

      const warnings: string[] = [];
      const info = await readComicInfo(archive, entries, warnings);
      const metadata = info?.metadata ?? emptyMetadata();
      metadata.title ??= titleFromFileName(path);
      metadata.pageCount = pages.length;

      const extraction: Extraction = {
        bookType: 'CBX',
        archiveType: archive.type,
        metadata,
        comic: info?.comic ?? emptyComic(),
        pages,
        ...(warnings.length > 0 ? { warnings } : {}),
      };
      if (!options.skipCover) {
        const coverPage = pages[info?.frontCoverIndex ?? 0] ?? pages[0];
        if (coverPage) {
          const data = await archive.read(coverPage, LIMITS.maxEntryBytes);
          extraction.cover = { data, mime: pageMime(coverPage) };
        }
      }
      return extraction;
    }, { blocking: options.blocking ?? false });
  } catch (error) {
    throw asFormatError(error);
  }
};

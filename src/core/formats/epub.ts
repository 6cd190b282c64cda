// EPUB 2 and 3: metadata from the OPF package document, a cover image, fixed-layout flag and a page estimate.
import { statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { findCover } from './epub-cover.ts';
import { readOpfMetadata } from './epub-metadata.ts';
import { isDocumentItem, parsePackage, type EpubPackage } from './epub-package.ts';
import { resolveHref } from './epub-paths.ts';
import { asFormatError, FormatError } from './errors.ts';
import { LIMITS } from './limits.ts';
import type { ExtractOptions, Extraction } from './types.ts';
import { attr, children, find, parseXml, text } from './xml.ts';
import { withZip, type ZipArchive } from './zip.ts';

/**
 * Uncompressed XHTML bytes per estimated page. A printed page holds roughly 1,500–2,000 characters of prose and
 * XHTML adds markup on top, so 2,000 bytes errs on the side of slightly more pages for tag-heavy books.
 */
export const EPUB_BYTES_PER_PAGE = 2000;

const CONTAINER = 'META-INF/container.xml';
const APPLE_DISPLAY_OPTIONS = 'META-INF/com.apple.ibooks.display-options.xml';

/** Reads an optional XML side file; a malformed one is ignored, but one declaring entities still fails the book. */
async function parseOptional(zip: ZipArchive, name: string) {
  const entry = zip.find(name);
  if (!entry) return undefined;
  try {
    return parseXml(await zip.readText(entry.name), name);
  } catch (error) {
    if (error instanceof FormatError && error.code === 'UNSAFE') throw error;
    return undefined;
  }
}

export async function locateOpf(zip: ZipArchive): Promise<string> {
  const container = await parseOptional(zip, CONTAINER);
  const rootfiles = children(find(container, 'rootfiles'), 'rootfile');
  const preferred = rootfiles.find((r) => attr(r, 'media-type') === 'application/oebps-package+xml') ?? rootfiles[0];
  const declared = zip.find(resolveHref('', attr(preferred, 'full-path')) ?? '');
  if (declared && !declared.isDirectory) return declared.name;
  const anyOpf = zip.entries.find((e) => !e.isDirectory && e.name.toLowerCase().endsWith('.opf'));
  if (anyOpf) return anyOpf.name;
  throw new FormatError('CORRUPT', 'not an EPUB: no OPF package document (META-INF/container.xml is missing or points nowhere)');
}

async function appleFixedLayout(zip: ZipArchive): Promise<boolean> {
  const doc = await parseOptional(zip, APPLE_DISPLAY_OPTIONS);
  for (const platform of children(find(doc, 'display_options'), 'platform')) {
    for (const option of children(platform, 'option')) {
      if (attr(option, 'name') === 'fixed-layout' && text(option)?.toLowerCase() === 'true') return true;
    }
  }
  return false;
}

function estimatePages(zip: ZipArchive, pkg: EpubPackage): number | undefined {
  const documents = pkg.spine.filter(isDocumentItem);
  if (documents.length === 0) return undefined;
  const bytes = documents.reduce((sum, item) => sum + (zip.find(item.path ?? '')?.size ?? 0), 0);
  return Math.max(1, Math.round(bytes / EPUB_BYTES_PER_PAGE));
}

export async function extractEpub(path: string, options: ExtractOptions = {}): Promise<Extraction> {
  try {
    const info = options.blocking ? statSync(path) : await stat(path);
    if (!info.isFile()) throw new FormatError('IO', `${path} is not a regular file`);
    if (info.size === 0) throw new FormatError('EMPTY', 'EPUB file is empty (0 bytes)');

    return await withZip(path, async (zip) => {
      const opfPath = await locateOpf(zip);
      const pkg = parsePackage(opfPath, await zip.readText(opfPath, LIMITS.maxXmlBytes));
      const opf = readOpfMetadata(pkg.metadata);
      const metadata = opf.metadata;
      metadata.pageCount = opf.declaredPageCount ?? estimatePages(zip, pkg);
      for (const key of Object.keys(metadata) as (keyof typeof metadata)[]) if (metadata[key] === undefined) delete metadata[key];

      const extraction: Extraction = {
        bookType: 'EPUB',
        archiveType: 'ZIP',
        fixedLayout: opf.fixedLayout || (await appleFixedLayout(zip)),
        metadata,
      };
      if (!options.skipCover) {
        const cover = await findCover(zip, pkg, opf.coverMeta);
        if (cover) extraction.cover = cover;
      }
      return extraction;
    }, { blocking: options.blocking ?? false });
  } catch (error) {
    throw asFormatError(error);
  }
}

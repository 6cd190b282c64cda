// FictionBook 2 (.fb2, and .fb2.zip holding one .fb2): description metadata and the coverpage binary.
import { stat } from 'node:fs/promises';
import { asFormatError, FormatError } from './errors.ts';
import { findCoverBinary } from './fb2-binary.ts';
import { readDescription } from './fb2-description.ts';
import { readHead } from './fb2-head.ts';
import { bufferSource, withFileSource, type ByteSource } from './fb2-source.ts';
import { LIMITS } from './limits.ts';
import type { ArchiveType, ExtractOptions, Extraction } from './types.ts';
import { withZip } from './zip.ts';

async function readFb2(source: ByteSource, options: ExtractOptions, archiveType: ArchiveType | undefined): Promise<Extraction> {
  if (source.size === 0) throw new FormatError('EMPTY', 'FB2 document is empty (0 bytes)');
  const head = await readHead(source);
  const { metadata, coverId } = readDescription(head.xml);
  for (const key of Object.keys(metadata) as (keyof typeof metadata)[]) if (metadata[key] === undefined) delete metadata[key];

  const extraction: Extraction = { bookType: 'FB2', metadata };
  if (archiveType) extraction.archiveType = archiveType;
  if (!options.skipCover) {
    const cover = await findCoverBinary(source, head.end, coverId).catch(() => undefined);
    if (cover) extraction.cover = cover;
  }
  return extraction;
}

export async function extractFb2(path: string, options: ExtractOptions = {}): Promise<Extraction> {
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new FormatError('IO', `${path} is not a regular file`);
    if (info.size === 0) throw new FormatError('EMPTY', 'FB2 file is empty (0 bytes)');

    if (path.toLowerCase().endsWith('.zip')) {
      return await withZip(path, async (zip) => {
        const entry = zip.entries.find((e) => !e.isDirectory && e.name.toLowerCase().endsWith('.fb2'));
        if (!entry) throw new FormatError('CORRUPT', 'zip archive holds no .fb2 document');
        // The archive offers no streaming read, so the (bounded) document is inflated once and scanned in memory.
        const document = await zip.read(entry.name, LIMITS.maxEntryBytes);
        return readFb2(bufferSource(document), options, 'ZIP');
      }, { blocking: options.blocking ?? false });
    }
    return await withFileSource(path, (source) => readFb2(source, options, undefined));
  } catch (error) {
    throw asFormatError(error);
  }
}

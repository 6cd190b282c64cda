// Writing catalog metadata back into a book file: EPUB (the OPF's metadata), PDF (an incremental update with a new
// Info dictionary and XMP packet) and CBZ (ComicInfo.xml). The file is replaced atomically and only after the new
// one reads back as what was written; a file that already says exactly this is not touched at all.
import { stat } from 'node:fs/promises';
import { oneWriteAtATime } from '../../file-writes.ts';
import { writeCbz } from './cbz.ts';
import { writeEpub } from './epub.ts';
import { writePdf } from './pdf.ts';
import { WriteBackError, type FileMetadata, type WriteBackFormat, type WriteBackOptions, type WriteBackResult } from './types.ts';

export { WriteBackError, type FileMetadata, type WriteBackFormat, type WriteBackOptions, type WriteBackResult } from './types.ts';

export async function writeMetadataToFile(path: string, format: WriteBackFormat, metadata: FileMetadata, options: WriteBackOptions = {}): Promise<WriteBackResult> {
  return oneWriteAtATime(path, async () => {
    const before = await stat(path).catch((error: NodeJS.ErrnoException) => {
      throw new WriteBackError('IO', `${path} cannot be read: ${error.code ?? error.message}`);
    });
    if (!before.isFile()) throw new WriteBackError('IO', `${path} is not a regular file`);
    if (options.maxFileBytes !== undefined && before.size > options.maxFileBytes) {
      return { status: 'skipped', reason: `the file is ${before.size} bytes, over the ${options.maxFileBytes}-byte limit for writing metadata into ${format.toUpperCase()} files` };
    }
    const write = format === 'epub' ? writeEpub : format === 'pdf' ? writePdf : writeCbz;
    try {
      return { status: await write(path, before, metadata, options.hooks) };
    } catch (error) {
      if (error instanceof WriteBackError) throw error;
      const err = error as NodeJS.ErrnoException;
      if (typeof err?.code === 'string' && err.syscall) throw new WriteBackError('IO', `${err.code}: ${err.message}`);
      throw error;
    }
  });
}

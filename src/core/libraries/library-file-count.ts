// Counts the files a library with these folders would read, for the "create library" preview.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { formatOf } from '../formats/index.ts';
import type { BookFileType } from '../formats/types.ts';

async function countIn(dir: string, allowed: ReadonlySet<BookFileType> | undefined): Promise<number> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  let count = 0;
  for (const entry of entries) {
    if (entry.isDirectory()) count += await countIn(join(dir, entry.name), allowed);
    else if (entry.isFile()) {
      const format = formatOf(entry.name);
      if (format && (!allowed || allowed.has(format.bookType))) count++;
    }
  }
  return count;
}

/** Book files under the folders (and files given directly), limited to `allowedFormats` when there are any. */
export async function countBookFiles(paths: string[], allowedFormats: BookFileType[] | null | undefined): Promise<number> {
  const allowed = allowedFormats && allowedFormats.length > 0 ? new Set(allowedFormats) : undefined;
  let total = 0;
  for (const path of paths) total += await countIn(path, allowed);
  return total;
}

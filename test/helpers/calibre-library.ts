// A calibre library on disk from a metadata.db made by calibredb: the book files and covers written where the
// database says they are (EPUBs real, other formats small stand-ins; the importer reads only the files' bytes).
import Database from 'better-sqlite3';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jpeg, opfDocument, writeEpub, writeZip } from './epub-fixtures.ts';

export const CALIBRE_FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'calibre');

export async function materializeCalibreLibrary(metadataDb: string, root: string): Promise<void> {
  mkdirSync(root, { recursive: true });
  copyFileSync(metadataDb, join(root, 'metadata.db'));
  const db = new Database(join(root, 'metadata.db'), { readonly: true });
  try {
    const files = db.prepare('select b.path, b.title, d.name, d.format from data d join books b on b.id = d.book').all() as { path: string; title: string; name: string; format: string }[];
    for (const f of files) {
      const folder = join(root, f.path);
      mkdirSync(folder, { recursive: true });
      const file = join(folder, `${f.name}.${f.format.toLowerCase()}`);
      if (f.format === 'EPUB') await writeEpub(file, { opf: opfDocument({ metadata: `<dc:title>${f.title}</dc:title>`, manifest: '' }) });
      else if (f.format === 'CBZ') await writeZip(file, [{ name: 'page-001.jpg', data: await jpeg(20, 30) }]);
      else writeFileSync(file, `%PDF-1.4\n% ${f.title}\n`);
    }
    for (const { path } of db.prepare('select path from books where has_cover = 1').all() as { path: string }[]) {
      writeFileSync(join(root, path, 'cover.jpg'), await jpeg(300, 450, '#246'));
    }
  } finally {
    db.close();
  }
}

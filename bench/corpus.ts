// Builds a benchmark corpus of N books in mixed formats (EPUB-heavy, with covers), reusing a few templates for speed.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import yazl from 'yazl';
import { PDFDocument, rgb } from 'pdf-lib';

function zipToBuffer(entries: { name: string; data: Buffer | string; compress?: boolean }[]): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const e of entries) zip.addBuffer(Buffer.isBuffer(e.data) ? e.data : Buffer.from(e.data), e.name, { compress: e.compress ?? true });
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on('error', reject);
  });
}

function opf(i: number): string {
  return `<?xml version="1.0" encoding="utf-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
<dc:identifier id="id">urn:uuid:bench-${i}</dc:identifier><dc:title>Bench Book ${i}</dc:title>
<dc:creator>Author ${i % 997}</dc:creator><dc:language>en</dc:language><dc:subject>Genre ${i % 31}</dc:subject>
<meta name="calibre:series" content="Series ${i % 211}"/><meta name="calibre:series_index" content="${(i % 12) + 1}"/>
<dc:description>Description of book ${i}. ${'Lorem ipsum dolor sit amet. '.repeat(8)}</dc:description>
</metadata>
<manifest><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/><item id="cover" href="cover.jpg" media-type="image/jpeg" properties="cover-image"/></manifest>
<spine><itemref idref="c1"/></spine></package>`;
}

export interface CorpusMix {
  epub: number;
  cbz: number;
  pdf: number;
}

export async function buildCorpus(dir: string, books: number, mix: CorpusMix = { epub: 0.85, cbz: 0.1, pdf: 0.05 }): Promise<void> {
  const covers = await Promise.all(['#a33', '#3a3', '#33a', '#aa3', '#3aa', '#a3a'].map((c) => sharp({ create: { width: 600, height: 900, channels: 3, background: c } }).jpeg({ quality: 80 }).toBuffer()));
  const pages = await Promise.all(['#222', '#555', '#888'].map((c) => sharp({ create: { width: 800, height: 1200, channels: 3, background: c } }).jpeg({ quality: 70 }).toBuffer()));
  const pdfDoc = await PDFDocument.create();
  for (let p = 0; p < 3; p++) pdfDoc.addPage([420, 595]).drawRectangle({ x: 20, y: 20, width: 380, height: 555, color: rgb(0.2, 0.4, 0.6) });
  pdfDoc.setTitle('Bench PDF');
  const pdfTemplate = Buffer.from(await pdfDoc.save());
  const chapter = `<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>c</title></head><body>${'<p>Some text of a chapter.</p>'.repeat(200)}</body></html>`;

  for (let i = 0; i < books; i++) {
    const folder = join(dir, `Author ${i % 997}`, `Shelf ${Math.floor(i / 997) % 50}`);
    mkdirSync(folder, { recursive: true });
    const r = (i * 7919) % 1000 / 1000;
    if (r < mix.epub) {
      const data = await zipToBuffer([
        { name: 'mimetype', data: 'application/epub+zip', compress: false },
        { name: 'META-INF/container.xml', data: '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>' },
        { name: 'OEBPS/content.opf', data: opf(i) },
        { name: 'OEBPS/c1.xhtml', data: chapter + `<!-- ${i} -->` },
        { name: 'OEBPS/cover.jpg', data: covers[i % covers.length] as Buffer, compress: false },
      ]);
      writeFileSync(join(folder, `book-${i}.epub`), data);
    } else if (r < mix.epub + mix.cbz) {
      const data = await zipToBuffer([
        { name: 'ComicInfo.xml', data: `<?xml version="1.0"?><ComicInfo><Title>Comic ${i}</Title><Series>Comic Series ${i % 50}</Series><Number>${i % 40}</Number><Writer>Writer ${i % 30}</Writer></ComicInfo>` },
        ...pages.map((p, n) => ({ name: `page${n + 1}.jpg`, data: p, compress: false })),
      ]);
      writeFileSync(join(folder, `comic-${i}.cbz`), data);
    } else {
      writeFileSync(join(folder, `doc-${i}.pdf`), Buffer.concat([pdfTemplate, Buffer.from(`\n% bench ${i}\n`)]));
    }
  }
}

/** The corpus of `books` books under bench/.corpus/books-N, built on first use and kept for the next runs. */
export async function syntheticCorpus(books: number): Promise<string> {
  const root = join(import.meta.dirname, '.corpus', `books-${books}`);
  if (!existsSync(join(root, '.complete'))) {
    rmSync(root, { recursive: true, force: true });
    mkdirSync(root, { recursive: true });
    await buildCorpus(root, books);
    writeFileSync(join(root, '.complete'), '');
  }
  return root;
}

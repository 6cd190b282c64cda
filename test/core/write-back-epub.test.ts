import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { buffer } from 'node:stream/consumers';
import yauzl from 'yauzl';
import { afterAll, describe, expect, it } from 'vitest';
import { extractEpub } from '../../src/core/formats/epub.ts';
import { rewriteOpf } from '../../src/core/metadata/write-back/epub.ts';
import { writeMetadataToFile, WriteBackError, type FileMetadata } from '../../src/core/metadata/write-back/index.ts';
import { jpeg, makeTempDir, opfDocument, writeEpub, writeZipBomb, writeZipWithHostileNames, xhtmlPage } from '../helpers/epub-fixtures.ts';

const tmp = makeTempDir('bindery-wb-epub-');
afterAll(() => tmp.remove());

interface RawEntry {
  name: string;
  method: number;
  offset: number;
  raw: Buffer;
}

/** Every entry's stored (still compressed) bytes, in archive order. */
function rawEntries(path: string): Promise<RawEntry[]> {
  return new Promise((resolve, reject) => {
    yauzl.open(path, { lazyEntries: true, validateEntrySizes: true }, (err, zip) => {
      if (err || !zip) return reject(err ?? new Error('no zip'));
      const out: RawEntry[] = [];
      zip.on('error', reject);
      zip.on('end', () => resolve(out.sort((a, b) => a.offset - b.offset)));
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, { decompress: entry.compressionMethod === 8 ? false : null } as yauzl.ZipFileOptions, (e, stream) => {
          if (e || !stream) return reject(e ?? new Error('no stream'));
          buffer(stream).then((raw) => {
            out.push({ name: entry.fileName, method: entry.compressionMethod, offset: entry.relativeOffsetOfLocalHeader, raw });
            zip.readEntry();
          }, reject);
        });
      });
      zip.readEntry();
    });
  });
}

const meta = (overrides: Partial<FileMetadata> = {}): FileMetadata => ({
  title: 'The Left Hand of Darkness',
  subtitle: 'Fiftieth Anniversary Edition',
  authors: ['Ursula K. Le Guin', 'Harold Bloom'],
  publisher: 'Ace Books',
  publishedDate: '1969-03-01',
  description: '<p>Winter is a planet where <b>nobody</b> is male or female &amp; everyone can be both.</p>',
  language: 'en',
  isbn13: '9780441478125',
  isbn10: '0441478123',
  asin: 'B000FBJCJE',
  goodreadsId: '18423',
  googleId: 'g00gle',
  hardcoverId: 'the-left-hand',
  comicvineId: undefined,
  seriesName: 'Hainish Cycle',
  seriesNumber: 4,
  seriesTotal: 8,
  categories: ['Science Fiction', 'Classics'],
  tags: ['favourite', 'reread'],
  ...overrides,
});

async function epub3(name: string): Promise<string> {
  const file = tmp.file(name);
  await writeEpub(file, {
    opf: opfDocument({
      metadata: [
        '    <dc:identifier id="bookid">urn:uuid:7b0c5d2e-6f1a-4c7e-9a51-0a2b3c4d5e6f</dc:identifier>',
        '    <dc:title id="t1">Old Title</dc:title>',
        '    <meta refines="#t1" property="title-type">main</meta>',
        '    <dc:creator id="c1">Somebody Else</dc:creator>',
        '    <meta refines="#c1" property="role" scheme="marc:relators">aut</meta>',
        '    <dc:contributor id="c2">An Illustrator</dc:contributor>',
        '    <meta refines="#c2" property="role" scheme="marc:relators">ill</meta>',
        '    <dc:language>fr</dc:language>',
        '    <dc:subject>Old Subject</dc:subject>',
        '    <dc:rights>All rights reserved &amp; then some</dc:rights>',
        '    <!-- a comment the author left -->',
        '    <meta property="dcterms:modified">2020-01-01T00:00:00Z</meta>',
        '    <meta name="cover" content="cover-img"/>',
      ].join('\n'),
      manifest: '<item id="ch1" href="ch1.xhtml" media-type="application/xhtml+xml"/>\n<item id="cover-img" href="cover.jpg" media-type="image/jpeg" properties="cover-image"/>',
      spine: '<itemref idref="ch1"/>',
    }),
    files: { 'OEBPS/ch1.xhtml': xhtmlPage('<p>'.concat('Lorem ipsum '.repeat(2000), '</p>')), 'OEBPS/cover.jpg': await jpeg(60, 90) },
  });
  return file;
}

async function epub2(name: string): Promise<string> {
  const file = tmp.file(name);
  await writeEpub(file, {
    opf: opfDocument({
      version: '2.0',
      metadata: [
        '<dc:identifier id="bookid" opf:scheme="ISBN">9780000000002</dc:identifier>',
        '<dc:title>Old</dc:title>',
        '<dc:creator opf:role="aut" opf:file-as="Else, Somebody">Somebody Else</dc:creator>',
        '<dc:creator opf:role="edt">An Editor</dc:creator>',
        '<dc:language>en</dc:language>',
        '<dc:date opf:event="modification">2021-02-03</dc:date>',
        '<meta name="calibre:series" content="Old Series"/>',
        '<meta name="calibre:series_index" content="2"/>',
        '<meta name="calibre:rating" content="8"/>',
      ].join('\n'),
      manifest: '<item id="ch1" href="ch1.xhtml" media-type="application/xhtml+xml"/>',
      spine: '<itemref idref="ch1"/>',
    }),
    files: { 'OEBPS/ch1.xhtml': xhtmlPage('<p>hello</p>') },
  });
  return file;
}

describe('EPUB write-back', () => {
  it('writes every field so the extractor reads it back, and copies every other entry as stored', async () => {
    const file = await epub3('round-trip.epub');
    const before = await rawEntries(file);
    const result = await writeMetadataToFile(file, 'epub', meta());
    expect(result).toEqual({ status: 'written' });

    const x = await extractEpub(file, { skipCover: true });
    expect(x.metadata).toMatchObject({
      title: 'The Left Hand of Darkness',
      subtitle: 'Fiftieth Anniversary Edition',
      authors: ['Ursula K. Le Guin', 'Harold Bloom'],
      publisher: 'Ace Books',
      publishedDate: '1969-03-01',
      description: 'Winter is a planet where nobody is male or female & everyone can be both.',
      language: 'en',
      isbn13: '9780441478125',
      isbn10: '0441478123',
      asin: 'B000FBJCJE',
      goodreadsId: '18423',
      googleId: 'g00gle',
      hardcoverId: 'the-left-hand',
      seriesName: 'Hainish Cycle',
      seriesNumber: 4,
      categories: ['Science Fiction', 'Classics'],
      tags: ['favourite', 'reread'],
    });

    const after = await rawEntries(file);
    expect(after.map((e) => e.name)).toEqual(before.map((e) => e.name));
    // mimetype stays the first entry, stored, at offset 0.
    expect(after[0]).toMatchObject({ name: 'mimetype', method: 0, offset: 0 });
    expect(readFileSync(file).subarray(30, 38).toString()).toBe('mimetype');
    for (const entry of after) {
      const old = before.find((e) => e.name === entry.name);
      if (entry.name.endsWith('.opf')) expect(entry.raw.equals(old?.raw ?? Buffer.alloc(0))).toBe(false);
      else expect(entry.raw.equals(old?.raw ?? Buffer.alloc(0)), entry.name).toBe(true);
    }
  });

  it('keeps what it does not own: identity, rights, comments, other creators, the cover meta', async () => {
    const file = await epub3('kept.epub');
    await writeMetadataToFile(file, 'epub', meta());
    const opf = (await rawEntries(file)).find((e) => e.name.endsWith('.opf'));
    expect(opf).toBeDefined();
    const text = (await new Promise<Buffer>((resolve, reject) => {
      yauzl.open(file, { lazyEntries: true }, (err, zip) => {
        if (err || !zip) return reject(err);
        zip.on('entry', (entry: yauzl.Entry) => {
          if (!entry.fileName.endsWith('.opf')) return zip.readEntry();
          zip.openReadStream(entry, (e, s) => (e || !s ? reject(e) : buffer(s).then(resolve, reject)));
        });
        zip.readEntry();
      });
    })).toString('utf8');
    for (const kept of [
      '<dc:identifier id="bookid">urn:uuid:7b0c5d2e-6f1a-4c7e-9a51-0a2b3c4d5e6f</dc:identifier>',
      '<dc:contributor id="c2">An Illustrator</dc:contributor>',
      '<meta refines="#c2" property="role" scheme="marc:relators">ill</meta>',
      '<dc:rights>All rights reserved &amp; then some</dc:rights>',
      '<!-- a comment the author left -->',
      '<meta property="dcterms:modified">2020-01-01T00:00:00Z</meta>',
      '<meta name="cover" content="cover-img"/>',
    ]) expect(text).toContain(kept);
    for (const gone of ['Old Title', 'Somebody Else', 'Old Subject', '<dc:language>fr</dc:language>', 'refines="#t1"', 'refines="#c1"']) expect(text).not.toContain(gone);
    // Outside <metadata> nothing moved.
    expect(text.slice(text.indexOf('</metadata>'))).toContain('<item id="cover-img" href="cover.jpg" media-type="image/jpeg" properties="cover-image"/>');
  });

  it('saving the same metadata again leaves the file byte for byte as it is', async () => {
    const file = await epub3('stable.epub');
    await writeMetadataToFile(file, 'epub', meta());
    const first = readFileSync(file);
    const mtime = statSync(file).mtimeMs;
    expect(await writeMetadataToFile(file, 'epub', meta())).toEqual({ status: 'unchanged' });
    expect(readFileSync(file).equals(first)).toBe(true);
    expect(statSync(file).mtimeMs).toBe(mtime);
  });

  it('rewriting the OPF is idempotent and does not touch the rest of the document', () => {
    const opf = opfDocument({
      metadata: '<dc:title>A</dc:title>\n<dc:identifier id="bookid">x</dc:identifier>',
      manifest: '<item id="a" href="a.xhtml" media-type="application/xhtml+xml"/>',
    });
    const once = rewriteOpf(opf, meta());
    expect(rewriteOpf(once, meta())).toBe(once);
    expect(once.slice(0, opf.indexOf('<metadata'))).toBe(opf.slice(0, opf.indexOf('<metadata')));
    expect(once.slice(once.indexOf('</metadata>'))).toBe(opf.slice(opf.indexOf('</metadata>')));
    const changed = rewriteOpf(once, meta({ title: 'Another' }));
    expect(changed).toContain('<dc:title>Another</dc:title>');
    expect(rewriteOpf(changed, meta({ title: 'Another' }))).toBe(changed);
  });

  it('writes EPUB 2 forms (opf:role, calibre series) and clears what the catalog cleared', async () => {
    const file = await epub2('epub2.epub');
    await writeMetadataToFile(file, 'epub', meta({ categories: [], tags: [], seriesName: undefined, seriesNumber: undefined, seriesTotal: undefined, isbn13: undefined, isbn10: undefined, subtitle: 'Sub' }));
    const x = await extractEpub(file, { skipCover: true });
    expect(x.metadata.title).toBe('The Left Hand of Darkness');
    expect(x.metadata.subtitle).toBe('Sub');
    expect(x.metadata.authors).toEqual(['Ursula K. Le Guin', 'Harold Bloom']);
    expect(x.metadata.seriesName).toBeUndefined();
    expect(x.metadata.categories).toEqual([]);
    expect(x.metadata.rating).toBe(4);
    // The package's own identifier (an ISBN here) is its identity and stays.
    expect(x.metadata.isbn13).toBe('9780000000002');
    expect(await writeMetadataToFile(file, 'epub', meta({ categories: [], tags: [], seriesName: undefined, seriesNumber: undefined, seriesTotal: undefined, isbn13: undefined, isbn10: undefined, subtitle: 'Sub' }))).toEqual({ status: 'unchanged' });
  });

  it('leaves the original untouched when anything fails before the rename', async () => {
    const file = await epub3('fail.epub');
    const original = readFileSync(file);
    await expect(writeMetadataToFile(file, 'epub', meta(), { hooks: { afterTempWritten: () => { throw new Error('disk on fire'); } } })).rejects.toThrow('disk on fire');
    expect(readFileSync(file).equals(original)).toBe(true);
    // The temporary file is damaged after it was written: verification refuses it.
    await expect(
      writeMetadataToFile(file, 'epub', meta(), { hooks: { afterTempWritten: (temp) => writeFileSync(temp, Buffer.from('not a zip at all')) } }),
    ).rejects.toMatchObject({ code: 'VERIFY_FAILED' });
    expect(readFileSync(file).equals(original)).toBe(true);
    // The file changes under us between reading and renaming: nothing is replaced.
    await expect(
      writeMetadataToFile(file, 'epub', meta(), { hooks: { beforeRename: () => writeFileSync(file, Buffer.concat([original, Buffer.from('x')])) } }),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(readFileSync(file).equals(Buffer.concat([original, Buffer.from('x')]))).toBe(true);
    expect(readdirSync(tmp.dir).filter((n) => n.includes('.bindery-'))).toEqual([]);
  });

  it('respects the size limit', async () => {
    const file = await epub3('big.epub');
    const original = readFileSync(file);
    const result = await writeMetadataToFile(file, 'epub', meta(), { maxFileBytes: 1000 });
    expect(result.status).toBe('skipped');
    expect(readFileSync(file).equals(original)).toBe(true);
  });

  it('refuses hostile or broken archives without touching them', async () => {
    const hostile = tmp.file('hostile.epub');
    await writeZipWithHostileNames(hostile, [
      { name: 'mimetype', data: 'application/epub+zip', compress: false },
      { name: 'META-INF/container.xml', data: '<container><rootfiles><rootfile full-path="content.opf"/></rootfiles></container>' },
      { name: 'content.opf', data: opfDocument({ metadata: '<dc:title>x</dc:title>', manifest: '' }) },
      { name: '../../evil.txt', data: 'gotcha' },
    ]);
    const hostileBytes = readFileSync(hostile);
    const error = await writeMetadataToFile(hostile, 'epub', meta()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WriteBackError);
    expect((error as WriteBackError).code).toBe('UNSUPPORTED');
    expect(readFileSync(hostile).equals(hostileBytes)).toBe(true);

    const bomb = tmp.file('bomb.epub');
    await writeZipBomb(bomb, [
      { name: 'mimetype', data: 'application/epub+zip', compress: false },
      { name: 'META-INF/container.xml', data: '<container><rootfiles><rootfile full-path="content.opf"/></rootfiles></container>' },
      { name: 'content.opf', data: opfDocument({ metadata: '<dc:title>x</dc:title>', manifest: '' }) },
    ], 'OEBPS/zeros.bin', 8 * 1024 * 1024);
    const bombBytes = readFileSync(bomb);
    await expect(writeMetadataToFile(bomb, 'epub', meta())).rejects.toMatchObject({ code: 'UNSUPPORTED' });
    expect(readFileSync(bomb).equals(bombBytes)).toBe(true);

    const entities = tmp.file('entities.epub');
    await writeEpub(entities, { opf: opfDocument({ metadata: '<dc:title>&xxe;</dc:title>', manifest: '' }).replace('<package', '<!DOCTYPE package [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n<package') });
    const entityBytes = readFileSync(entities);
    await expect(writeMetadataToFile(entities, 'epub', meta())).rejects.toMatchObject({ code: 'UNSUPPORTED' });
    expect(readFileSync(entities).equals(entityBytes)).toBe(true);

    const junk = tmp.file('junk.epub');
    writeFileSync(junk, Buffer.alloc(5000, 7));
    await expect(writeMetadataToFile(junk, 'epub', meta())).rejects.toMatchObject({ code: 'CORRUPT' });
    expect(readFileSync(junk).equals(Buffer.alloc(5000, 7))).toBe(true);
  });
});

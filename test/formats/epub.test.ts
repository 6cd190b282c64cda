import fs from 'node:fs';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectFormatError } from '../helpers/format-assertions.ts';
import { extractEpub, EPUB_BYTES_PER_PAGE } from '../../src/core/formats/epub.ts';
import {
  containerXml, jpeg, makeTempDir, opfDocument, png, writeEpub, writeZip, writeZipBomb, writeZipWithHostileNames, xhtmlPage,
  type TempDir,
} from '../helpers/epub-fixtures.ts';

let tmp: TempDir;
beforeAll(() => {
  tmp = makeTempDir();
});
afterAll(() => tmp.remove());


const chapter = (words: number) => xhtmlPage(`<p>${'lorem ipsum '.repeat(words)}</p>`);

describe('extractEpub — EPUB 3', () => {
  let file: string;
  let chapterBytes: number;

  beforeAll(async () => {
    file = tmp.file('epub3.epub');
    const ch1 = chapter(1000);
    const ch2 = chapter(2500);
    chapterBytes = Buffer.byteLength(ch1) + Buffer.byteLength(ch2);
    const opf = opfDocument({
      version: '3.0',
      metadata: `
    <dc:identifier id="bookid">urn:uuid:0f6b4c2e-2a1d-4b7e-9a51-3c2d1e0f9a88</dc:identifier>
    <dc:identifier id="isbn">urn:isbn:978-0-306-40615-7</dc:identifier>
    <dc:identifier>amazon:B00TESTASN</dc:identifier>
    <dc:identifier>calibre:42</dc:identifier>
    <dc:identifier>goodreads:123456</dc:identifier>
    <dc:identifier id="ean">9781861972712</dc:identifier>
    <meta refines="#ean" property="identifier-type" scheme="onix:codelist5">15</meta>
    <dc:title id="t-sub">A Subtitle Worth Having</dc:title>
    <dc:title id="t-main">The Dragon&#8217;s Road</dc:title>
    <meta refines="#t-main" property="title-type">main</meta>
    <meta refines="#t-sub" property="title-type">subtitle</meta>
    <dc:creator id="c1">Ann Leckie</dc:creator>
    <meta refines="#c1" property="role" scheme="marc:relators">aut</meta>
    <meta refines="#c1" property="file-as">Leckie, Ann</meta>
    <dc:creator id="c2">Pat Illustrator</dc:creator>
    <meta refines="#c2" property="role" scheme="marc:relators">ill</meta>
    <dc:creator id="c3">Zed Second</dc:creator>
    <dc:creator id="c4">Nora Narrator</dc:creator>
    <meta refines="#c4" property="role" scheme="marc:relators">nrt</meta>
    <dc:publisher>Orbit</dc:publisher>
    <dc:date>2014-10-07T00:00:00Z</dc:date>
    <dc:language>en-GB</dc:language>
    <dc:subject>Science Fiction</dc:subject>
    <dc:subject>Space Opera</dc:subject>
    <dc:subject>science fiction</dc:subject>
    <dc:description>&lt;p&gt;First paragraph &amp;amp; more.&lt;/p&gt;&lt;p&gt;Second &lt;b&gt;bold&lt;/b&gt; paragraph.&lt;/p&gt;</dc:description>
    <meta property="belongs-to-collection" id="coll">Imperial Radch</meta>
    <meta refines="#coll" property="collection-type">series</meta>
    <meta refines="#coll" property="group-position">2</meta>
    <meta property="rendition:layout">pre-paginated</meta>
    <meta property="dcterms:modified">2020-01-01T00:00:00Z</meta>`,
      manifest: `
    <item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
    <item id="ch1" href="Text/ch1.xhtml" media-type="application/xhtml+xml"/>
    <item id="ch2" href="Text/ch2.xhtml" media-type="application/xhtml+xml"/>
    <item id="decoy" href="Images/decoy-cover.png" media-type="image/png"/>
    <item id="img1" href="Images/front%20art.jpg" media-type="image/jpeg" properties="cover-image"/>`,
      spine: `<itemref idref="ch1"/><itemref idref="ch2"/>`,
    });
    await writeEpub(file, {
      opf,
      files: {
        'OEBPS/nav.xhtml': xhtmlPage('<nav/>'),
        'OEBPS/Text/ch1.xhtml': ch1,
        'OEBPS/Text/ch2.xhtml': ch2,
        'OEBPS/Images/decoy-cover.png': await png(10, 10),
        'OEBPS/Images/front art.jpg': await jpeg(300, 450),
      },
    });
  });

  it('reads the main title, subtitle, authors by role, narrator and the Dublin Core fields', async () => {
    const { bookType, archiveType, metadata } = await extractEpub(file);
    expect(bookType).toBe('EPUB');
    expect(archiveType).toBe('ZIP');
    expect(metadata.title).toBe('The Dragon’s Road');
    expect(metadata.subtitle).toBe('A Subtitle Worth Having');
    expect(metadata.authors).toEqual(['Ann Leckie', 'Zed Second']);
    expect(metadata.narrator).toBe('Nora Narrator');
    expect(metadata.publisher).toBe('Orbit');
    expect(metadata.publishedDate).toBe('2014-10-07');
    expect(metadata.language).toBe('en-GB');
    expect(metadata.categories).toEqual(['Science Fiction', 'Space Opera']);
    expect(metadata.description).toBe('First paragraph & more.\nSecond bold paragraph.');
  });

  it('sorts identifiers into fields and keeps every scheme', async () => {
    const { metadata } = await extractEpub(file);
    expect(metadata.isbn13).toBe('9780306406157');
    expect(metadata.asin).toBe('B00TESTASN');
    expect(metadata.goodreadsId).toBe('123456');
    expect(metadata.identifiers).toEqual({
      uuid: '0f6b4c2e-2a1d-4b7e-9a51-3c2d1e0f9a88',
      isbn: '9780306406157',
      amazon: 'B00TESTASN',
      calibre: '42',
      goodreads: '123456',
    });
  });

  it('reads the series from a belongs-to-collection refinement', async () => {
    const { metadata } = await extractEpub(file);
    expect(metadata.seriesName).toBe('Imperial Radch');
    expect(metadata.seriesNumber).toBe(2);
  });

  it('flags pre-paginated books as fixed layout and estimates pages from the spine', async () => {
    const { fixedLayout, metadata } = await extractEpub(file);
    expect(fixedLayout).toBe(true);
    expect(metadata.pageCount).toBe(Math.round(chapterBytes / EPUB_BYTES_PER_PAGE));
    expect(metadata.pageCount).toBeGreaterThan(1);
  });

  it('takes the cover-image manifest item (URL-encoded href) over other images', async () => {
    const { cover } = await extractEpub(file);
    expect(cover?.mime).toBe('image/jpeg');
    const info = await sharp(cover?.data).metadata();
    expect([info.format, info.width, info.height]).toEqual(['jpeg', 300, 450]);
  });

  it('skips the cover when asked', async () => {
    const result = await extractEpub(file, { skipCover: true });
    expect(result.cover).toBeUndefined();
    expect(result.metadata.title).toBe('The Dragon’s Road');
  });
});

describe('extractEpub — EPUB 2 written by calibre', () => {
  let file: string;

  beforeAll(async () => {
    file = tmp.file('calibre.epub');
    const opf = opfDocument({
      version: '2.0',
      metadata: `
    <dc:title>Dune: Deluxe Edition</dc:title>
    <dc:creator opf:role="aut" opf:file-as="Herbert, Frank">Frank Herbert</dc:creator>
    <dc:creator opf:role="edt" opf:file-as="Editor, Ed">Ed Editor</dc:creator>
    <dc:contributor opf:role="nrt">Scott Brick</dc:contributor>
    <dc:contributor opf:role="bkp">calibre (5.0) [https://calibre-ebook.com]</dc:contributor>
    <dc:date opf:event="modification">2021-03-03</dc:date>
    <dc:date opf:event="publication">1965-08-01</dc:date>
    <dc:identifier opf:scheme="calibre" id="calibre_id">1234</dc:identifier>
    <dc:identifier opf:scheme="uuid" id="uuid_id">d1b7d0e4-1f7a-4d59-9d0b-6a3a9c8e2f10</dc:identifier>
    <dc:identifier opf:scheme="ISBN">0-306-40615-2</dc:identifier>
    <dc:identifier opf:scheme="AMAZON">B000SEIFKK</dc:identifier>
    <dc:identifier opf:scheme="GOOGLE">ydQiDQAAQBAJ</dc:identifier>
    <dc:identifier opf:scheme="GOODREADS">44767458</dc:identifier>
    <dc:identifier opf:scheme="HARDCOVER">dune</dc:identifier>
    <dc:identifier opf:scheme="COMICVINE">4000-12345</dc:identifier>
    <dc:publisher>Ace</dc:publisher>
    <dc:language>eng</dc:language>
    <dc:subject>Fiction</dc:subject>
    <dc:description>A desert planet.
Spice.</dc:description>
    <meta name="calibre:series" content="Dune Chronicles"/>
    <meta name="calibre:series_index" content="1.5"/>
    <meta name="calibre:rating" content="8.0"/>
    <meta name="calibre:timestamp" content="2021-03-03T10:00:00+00:00"/>
    <meta name="cover" content="my-cover"/>`,
      manifest: `
    <item id="titlepage" href="titlepage.xhtml" media-type="application/xhtml+xml"/>
    <item id="my-cover" href="art/c.png" media-type="image/png"/>
    <item id="other" href="art/other.jpg" media-type="image/jpeg"/>`,
      spine: `<itemref idref="titlepage"/>`,
    });
    await writeEpub(file, {
      opf,
      opfPath: 'content.opf',
      files: {
        'titlepage.xhtml': xhtmlPage('<p>tiny</p>'),
        'art/c.png': await png(120, 180),
        'art/other.jpg': await jpeg(50, 50),
        'META-INF/com.apple.ibooks.display-options.xml':
          '<?xml version="1.0"?><display_options><platform name="*"><option name="fixed-layout">true</option></platform></display_options>',
      },
    });
  });

  it('keeps calibre-style "Title: Subtitle" whole and ignores file-as and non-author roles', async () => {
    const { metadata } = await extractEpub(file);
    expect(metadata.title).toBe('Dune: Deluxe Edition');
    expect(metadata.subtitle).toBeUndefined();
    expect(metadata.authors).toEqual(['Frank Herbert']);
    expect(metadata.narrator).toBe('Scott Brick');
    expect(metadata.publishedDate).toBe('1965-08-01');
    expect(metadata.publisher).toBe('Ace');
    expect(metadata.language).toBe('eng');
    expect(metadata.categories).toEqual(['Fiction']);
    expect(metadata.description).toBe('A desert planet.\nSpice.');
  });

  it('maps opf:scheme identifiers', async () => {
    const { metadata } = await extractEpub(file);
    expect(metadata.isbn10).toBe('0306406152');
    expect(metadata.isbn13).toBeUndefined();
    expect(metadata.asin).toBe('B000SEIFKK');
    expect(metadata.googleId).toBe('ydQiDQAAQBAJ');
    expect(metadata.goodreadsId).toBe('44767458');
    expect(metadata.hardcoverId).toBe('dune');
    expect(metadata.comicvineId).toBe('4000-12345');
    expect(metadata.identifiers).toEqual({
      calibre: '1234',
      uuid: 'd1b7d0e4-1f7a-4d59-9d0b-6a3a9c8e2f10',
      isbn: '0306406152',
      amazon: 'B000SEIFKK',
      google: 'ydQiDQAAQBAJ',
      goodreads: '44767458',
      hardcover: 'dune',
      comicvine: '4000-12345',
    });
  });

  it('reads calibre series, index and rating (0–10 halved)', async () => {
    const { metadata } = await extractEpub(file);
    expect(metadata.seriesName).toBe('Dune Chronicles');
    expect(metadata.seriesNumber).toBe(1.5);
    expect(metadata.rating).toBe(4);
  });

  it('resolves <meta name="cover"> through the manifest id, relative to a root-level OPF', async () => {
    const { cover } = await extractEpub(file);
    expect(cover?.mime).toBe('image/png');
    const info = await sharp(cover?.data).metadata();
    expect([info.format, info.width, info.height]).toEqual(['png', 120, 180]);
  });

  it('honours the Apple display-options fixed-layout flag; tiny books still count one page', async () => {
    const { fixedLayout, metadata } = await extractEpub(file);
    expect(fixedLayout).toBe(true);
    expect(metadata.pageCount).toBe(1);
  });
});

describe('extractEpub — cover fallbacks', () => {
  const plainMetadata = '<dc:title>Cover Test</dc:title><dc:creator>Someone</dc:creator>';

  async function coverOf(name: string, parts: { metadata?: string; manifest: string; spine?: string; guide?: string }, files: Record<string, Buffer | string>) {
    const file = tmp.file(name);
    await writeEpub(file, { opf: opfDocument({ version: '2.0', ...parts, metadata: plainMetadata + (parts.metadata ?? '') }), files });
    const { cover, metadata } = await extractEpub(file);
    expect(metadata.title).toBe('Cover Test');
    return cover && { mime: cover.mime, ...(await sharp(cover.data).metadata()) };
  }

  it('treats a <meta name="cover"> that is not a manifest id as an href', async () => {
    const cover = await coverOf(
      'meta-href.epub',
      { metadata: '<meta name="cover" content="images/front.jpg"/>', manifest: '<item id="x" href="images/front.jpg" media-type="image/jpeg"/><item id="y" href="images/other.png" media-type="image/png"/>' },
      { 'OEBPS/images/front.jpg': await jpeg(61, 91), 'OEBPS/images/other.png': await png(10, 10) },
    );
    expect([cover?.width, cover?.height]).toEqual([61, 91]);
  });

  it('finds an image whose id or href mentions "cover"', async () => {
    const cover = await coverOf(
      'named.epub',
      { manifest: '<item id="a" href="a.png" media-type="image/png"/><item id="b" href="img/Cover.jpeg" media-type="image/jpeg"/>' },
      { 'OEBPS/a.png': await png(10, 10), 'OEBPS/img/Cover.jpeg': await jpeg(62, 92) },
    );
    expect([cover?.format, cover?.width, cover?.height]).toEqual(['jpeg', 62, 92]);
  });

  it('follows the EPUB 2 guide cover page to its image', async () => {
    const cover = await coverOf(
      'guide.epub',
      {
        manifest: '<item id="p" href="front.xhtml" media-type="application/xhtml+xml"/><item id="i" href="pic.jpg" media-type="image/jpeg"/><item id="j" href="first.png" media-type="image/png"/>',
        spine: '<itemref idref="p"/>',
        guide: '<reference type="cover" href="front.xhtml" title="Cover"/>',
      },
      { 'OEBPS/front.xhtml': xhtmlPage('<div><img alt="x" src="pic.jpg"/></div>'), 'OEBPS/pic.jpg': await jpeg(63, 93), 'OEBPS/first.png': await png(10, 10) },
    );
    expect([cover?.width, cover?.height]).toEqual([63, 93]);
  });

  it('takes the first <img> of the first spine document, resolving ../ and %20', async () => {
    const cover = await coverOf(
      'spine-img.epub',
      {
        manifest: '<item id="t" href="Text/start.xhtml" media-type="application/xhtml+xml"/><item id="z" href="Images/zzz.png" media-type="image/png"/><item id="i" href="Images/the%20art.jpg" media-type="image/jpeg"/>',
        spine: '<itemref idref="t"/>',
      },
      { 'OEBPS/Text/start.xhtml': xhtmlPage('<p>Hello</p><img src="../Images/the%20art.jpg"/>'), 'OEBPS/Images/the art.jpg': await jpeg(64, 94), 'OEBPS/Images/zzz.png': await png(10, 10) },
    );
    expect([cover?.width, cover?.height]).toEqual([64, 94]);
  });

  it('takes an SVG <image xlink:href> in the first spine document', async () => {
    const cover = await coverOf(
      'svg.epub',
      {
        manifest: '<item id="t" href="start.xhtml" media-type="application/xhtml+xml"/><item id="z" href="a.png" media-type="image/png"/><item id="i" href="b.jpg" media-type="image/jpeg"/>',
        spine: '<itemref idref="t"/>',
      },
      { 'OEBPS/start.xhtml': xhtmlPage('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"><image width="1" height="1" xlink:href="b.jpg"/></svg>'), 'OEBPS/b.jpg': await jpeg(65, 95), 'OEBPS/a.png': await png(10, 10) },
    );
    expect([cover?.width, cover?.height]).toEqual([65, 95]);
  });

  it('falls back to the first manifest image', async () => {
    const cover = await coverOf(
      'first-image.epub',
      { manifest: '<item id="t" href="t.xhtml" media-type="application/xhtml+xml"/><item id="i" href="pic.png" media-type="image/png"/>', spine: '<itemref idref="t"/>' },
      { 'OEBPS/t.xhtml': xhtmlPage('<p>No pictures here</p>'), 'OEBPS/pic.png': await png(66, 96) },
    );
    expect([cover?.format, cover?.width, cover?.height]).toEqual(['png', 66, 96]);
  });

  it('moves past a declared cover that is missing or not an image', async () => {
    const cover = await coverOf(
      'broken-cover.epub',
      {
        metadata: '<meta name="cover" content="gone"/>',
        manifest: '<item id="c" href="cover.jpg" media-type="image/jpeg" properties="cover-image"/><item id="gone" href="missing.jpg" media-type="image/jpeg"/><item id="ok" href="real.png" media-type="image/png"/>',
      },
      { 'OEBPS/cover.jpg': 'this is not a jpeg at all', 'OEBPS/real.png': await png(67, 97) },
    );
    expect([cover?.width, cover?.height]).toEqual([67, 97]);
  });

  it('returns no cover (but the metadata) when no image exists at all', async () => {
    const cover = await coverOf('no-images.epub', { manifest: '<item id="t" href="t.xhtml" media-type="application/xhtml+xml"/>', spine: '<itemref idref="t"/>' }, { 'OEBPS/t.xhtml': xhtmlPage('<p>text</p>') });
    expect(cover).toBeUndefined();
  });
});

describe('extractEpub — metadata written back by Booklore/Grimmory', () => {
  it('reads booklore: metas for subtitle, series, ids, tags and a declared page count', async () => {
    const file = tmp.file('booklore.epub');
    await writeEpub(file, {
      opf: opfDocument({
        metadata: `
    <dc:title>Written Back</dc:title>
    <dc:date>0101-01-01T00:00:00+00:00</dc:date>
    <meta property="booklore:subtitle">Second Life</meta>
    <meta property="booklore:series">Round Trips</meta>
    <meta property="booklore:series_index">3</meta>
    <meta property="booklore:series_total">5</meta>
    <meta property="booklore:asin">B0BOOKLORE</meta>
    <meta property="booklore:hardcover_id">hc-77</meta>
    <meta property="booklore:tags">favourite; to-reread</meta>
    <meta property="booklore:page_count">321</meta>`,
        manifest: '<item id="t" href="t.xhtml" media-type="application/xhtml+xml"/>',
        spine: '<itemref idref="t"/>',
      }),
      files: { 'OEBPS/t.xhtml': chapter(10) },
    });
    const { metadata } = await extractEpub(file);
    expect(metadata.subtitle).toBe('Second Life');
    expect([metadata.seriesName, metadata.seriesNumber, metadata.seriesTotal]).toEqual(['Round Trips', 3, 5]);
    expect(metadata.asin).toBe('B0BOOKLORE');
    expect(metadata.hardcoverId).toBe('hc-77');
    expect(metadata.tags).toEqual(['favourite', 'to-reread']);
    expect(metadata.pageCount).toBe(321);
    // calibre's "no date" placeholder is not a publication date.
    expect(metadata.publishedDate).toBeUndefined();
  });
});

describe('extractEpub — locating the OPF', () => {
  it('falls back to the first .opf entry when container.xml is missing', async () => {
    const file = tmp.file('no-container.epub');
    await writeEpub(file, {
      container: false,
      opfPath: 'book/package.opf',
      opf: opfDocument({ metadata: '<dc:title>Found Anyway</dc:title>', manifest: '' }),
    });
    const { metadata } = await extractEpub(file);
    expect(metadata.title).toBe('Found Anyway');
    expect(metadata.authors).toEqual([]);
    expect(metadata.pageCount).toBeUndefined();
  });

  it('falls back when container.xml points at a missing file', async () => {
    const file = tmp.file('bad-container.epub');
    await writeEpub(file, { container: containerXml('nowhere/content.opf'), opf: opfDocument({ metadata: '<dc:title>Second Chance</dc:title>', manifest: '' }) });
    expect((await extractEpub(file)).metadata.title).toBe('Second Chance');
  });
});

describe('extractEpub — hostile input', () => {
  const validOpf = opfDocument({ metadata: '<dc:title>Hostile</dc:title>', manifest: '' });

  it('rejects a zero-byte file as EMPTY', async () => {
    const file = tmp.file('zero.epub');
    fs.writeFileSync(file, '');
    await expectFormatError(extractEpub(file), 'EMPTY');
  });

  it('rejects a missing file as IO', async () => {
    await expectFormatError(extractEpub(tmp.file('does-not-exist.epub')), 'IO');
  });

  it('rejects an EPUB cut in half as CORRUPT', async () => {
    const whole = tmp.file('whole.epub');
    await writeEpub(whole, { opf: validOpf, files: { 'OEBPS/big.jpg': await jpeg(400, 400) } });
    const bytes = fs.readFileSync(whole);
    const half = tmp.file('half.epub');
    fs.writeFileSync(half, bytes.subarray(0, Math.floor(bytes.length / 2)));
    await expectFormatError(extractEpub(half), 'CORRUPT');
  });

  it('rejects garbage bytes with an .epub name as CORRUPT', async () => {
    const file = tmp.file('garbage.epub');
    fs.writeFileSync(file, Buffer.from('this is plain text pretending to be an epub\n'.repeat(50)));
    await expectFormatError(extractEpub(file), 'CORRUPT');
  });

  it('rejects a zip with neither container.xml nor an OPF as CORRUPT', async () => {
    const file = tmp.file('no-opf.epub');
    await writeZip(file, [{ name: 'mimetype', data: 'application/epub+zip', compress: false }, { name: 'text/chapter.xhtml', data: xhtmlPage('x') }]);
    const error = await expectFormatError(extractEpub(file), 'CORRUPT');
    expect(error.message).toMatch(/OPF/);
  });

  it('rejects an OPF that is not XML as CORRUPT', async () => {
    const file = tmp.file('bad-opf.epub');
    await writeEpub(file, { opf: '<package><metadata><dc:title>unclosed' });
    await expectFormatError(extractEpub(file), 'CORRUPT');
  });

  it('rejects an entry named ../../evil.txt as UNSAFE', async () => {
    const file = tmp.file('traversal.epub');
    await writeZipWithHostileNames(file, [
      { name: 'META-INF/container.xml', data: containerXml('OEBPS/content.opf') },
      { name: 'OEBPS/content.opf', data: validOpf },
      { name: '../../evil.txt', data: 'owned' },
    ]);
    await expectFormatError(extractEpub(file), 'UNSAFE');
  });

  it('rejects an absolute entry name (/etc/passwd) as UNSAFE', async () => {
    const file = tmp.file('absolute.epub');
    await writeZipWithHostileNames(file, [
      { name: 'META-INF/container.xml', data: containerXml('OEBPS/content.opf') },
      { name: 'OEBPS/content.opf', data: validOpf },
      { name: '/etc/passwd', data: 'root:x:0:0' },
    ]);
    await expectFormatError(extractEpub(file), 'UNSAFE');
  });

  it('rejects a zip bomb (one entry of 200 MB of zeros) as TOO_LARGE', async () => {
    const file = tmp.file('bomb.epub');
    await writeZipBomb(
      file,
      [{ name: 'META-INF/container.xml', data: containerXml('OEBPS/content.opf') }, { name: 'OEBPS/content.opf', data: validOpf }],
      'OEBPS/chapter.xhtml',
      200 * 1024 * 1024,
    );
    expect(fs.statSync(file).size).toBeLessThan(2 * 1024 * 1024);
    await expectFormatError(extractEpub(file), 'TOO_LARGE');
  });

  it('rejects an OPF declaring entities (billion laughs) as UNSAFE', async () => {
    const file = tmp.file('laughs.epub');
    const opf = `<?xml version="1.0"?>
<!DOCTYPE package [
  <!ENTITY lol "lol">
  <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
  <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<package xmlns="http://www.idpf.org/2007/opf" version="2.0"><metadata><dc:title xmlns:dc="http://purl.org/dc/elements/1.1/">&lol3;</dc:title></metadata></package>`;
    await writeEpub(file, { opf });
    await expectFormatError(extractEpub(file), 'UNSAFE');
  });

  it('rejects a container.xml declaring an external entity as UNSAFE', async () => {
    const file = tmp.file('xxe.epub');
    const container = `<?xml version="1.0"?><!DOCTYPE container [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="&xxe;"/></rootfiles></container>`;
    await writeEpub(file, { container, opf: validOpf });
    await expectFormatError(extractEpub(file), 'UNSAFE');
  });
});

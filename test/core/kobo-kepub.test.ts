// EPUB → KEPUB: Kobo's span markup (as kepubify documents it), the wrapper divs and style, a valid archive whose
// documents still parse, files other than the documents untouched, the cache, and books that cannot be converted.
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { XMLValidator } from 'fast-xml-parser';
import { afterEach, describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import { kepubifyContent, sentences } from '../../src/core/kobo/kepub-content.ts';
import { knownDownloadSize } from '../../src/core/kobo/download-file.ts';
import { cachedSpanMap, kepubFor } from '../../src/core/kobo/kepub-cache.ts';
import { kepubFingerprint, type KoboPrimaryFile } from '../../src/core/kobo/kobo-books.ts';
import type { KoboServerSettings } from '../../src/core/kobo/server-settings.ts';
import { contentDocuments, markCoverImage, rootfilePath } from '../../src/core/kobo/kepub-package.ts';
import { convertToKepub } from '../../src/core/kobo/kepub.ts';
import { jpeg, makeTempDir, opfDocument, writeEpub, writeZip, xhtmlPage, type TempDir } from '../helpers/epub-fixtures.ts';

let tmp: TempDir | undefined;
afterEach(() => {
  tmp?.remove();
  tmp = undefined;
});

interface Entry {
  name: string;
  compressionMethod: number;
  data: Buffer;
}

function readZip(path: string): Promise<Entry[]> {
  return new Promise((resolve, reject) => {
    yauzl.open(path, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err ?? new Error('no zip'));
      const out: Entry[] = [];
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (e, stream) => {
          if (e || !stream) return reject(e ?? new Error('no stream'));
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => {
            out.push({ name: entry.fileName, compressionMethod: entry.compressionMethod, data: Buffer.concat(chunks) });
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve(out));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

const spanIds = (html: string): string[] => [...html.matchAll(/<span class="koboSpan" id="(kobo\.\d+\.\d+)">/g)].map((m) => m[1] as string);

describe('content documents', () => {
  it('splits text into sentences the way Kobo does', () => {
    expect(sentences('One. Two! "Three?" Four: five… six')).toEqual(['One. ', 'Two! ', '"Three?" ', 'Four: ', 'five… six']);
    expect(sentences('No end')).toEqual(['No end']);
  });

  it('wraps sentences and images in numbered spans, one paragraph number per block', () => {
    const page = xhtmlPage('<h1>Title</h1><p>First sentence. Second one!</p><p>Next <em>emphasis. More</em> text.</p><p><img src="a.jpg" alt=""/></p><ul><li>Item one.</li><li>Item two.</li></ul>');
    const { html, spans } = kepubifyContent(page);
    expect(html).toContain('<body><div id="book-columns"><div id="book-inner"><h1><span class="koboSpan" id="kobo.0.1">Title</span></h1>');
    expect(html).toContain('<p><span class="koboSpan" id="kobo.1.1">First sentence. </span><span class="koboSpan" id="kobo.1.2">Second one!</span></p>');
    expect(html).toContain('<p><span class="koboSpan" id="kobo.2.1">Next </span><em><span class="koboSpan" id="kobo.2.2">emphasis. </span><span class="koboSpan" id="kobo.2.3">More</span></em><span class="koboSpan" id="kobo.2.4"> text.</span></p>');
    expect(html).toContain('<span class="koboSpan" id="kobo.3.1"><img src="a.jpg" alt=""/></span>');
    expect(html).toContain('<li><span class="koboSpan" id="kobo.4.1">Item one.</span></li><li><span class="koboSpan" id="kobo.4.2">Item two.</span></li>');
    expect(html).toContain('</ul></div></div></body>');
    expect(html).toContain('<style type="text/css" class="kobostylehacks">div#book-inner { margin-top: 0; margin-bottom: 0;}</style></head>');
    expect(spans.ids).toEqual(spanIds(html));
    expect(spans.offsets[0]).toBe(0);
    expect(spans.length).toBeGreaterThan(40);
    expect(XMLValidator.validate(html)).toBe(true);
  });

  it('leaves scripts, styles, preformatted text, SVG, comments and entities alone', () => {
    const body = '<pre>keep. this</pre><script>var a = 1. ;</script><svg xmlns="http://www.w3.org/2000/svg"><text>Label. Here</text></svg><!-- a. comment --><p>Fish &amp; chips. Tea&#160;time.</p><div>\n  </div><p> </p>';
    const { html } = kepubifyContent(xhtmlPage(body));
    expect(html).toContain('<pre>keep. this</pre><script>var a = 1. ;</script><svg xmlns="http://www.w3.org/2000/svg"><text>Label. Here</text></svg><!-- a. comment -->');
    expect(html).toContain('<p><span class="koboSpan" id="kobo.1.1">Fish &amp; chips. </span><span class="koboSpan" id="kobo.1.2">Tea&#160;time.</span></p>');
    // Whitespace is wrapped only directly inside a paragraph.
    expect(html).toContain('<div>\n  </div><p><span class="koboSpan" id="kobo.2.1"> </span></p>');
    expect(XMLValidator.validate(html)).toBe(true);
  });

  it('does not convert a document twice and adds hyphenation when forced', () => {
    const once = kepubifyContent(xhtmlPage('<p>Already. Done.</p>')).html;
    const twice = kepubifyContent(once, { hyphenate: true }).html;
    expect(spanIds(twice)).toEqual(spanIds(once));
    expect(twice.match(/book-columns/g)).toHaveLength(1);
    expect(twice).toContain('class="kepubify-hyphenate"');
  });

  it('copes with HTML-style documents (void elements, no head)', () => {
    const { html } = kepubifyContent('<html><body><p>Line<br>break. <img src="x.png"> end</p></body></html>');
    expect(html).toContain('<head><style type="text/css" class="kobostylehacks">');
    expect(html).toContain('<span class="koboSpan" id="kobo.1.1">Line</span><br><span class="koboSpan" id="kobo.1.2">break. </span><span class="koboSpan" id="kobo.2.1"><img src="x.png"></span><span class="koboSpan" id="kobo.2.2"> end</span>');
  });
});

describe('the package document', () => {
  const opf = opfDocument({
    metadata: '<meta name="cover" content="cover-img"/>',
    manifest: [
      '<item id="c1" href="text/ch%201.xhtml" media-type="application/xhtml+xml"/>',
      '<item id="c2" href="ch2.html" media-type="text/html"/>',
      '<item id="css" href="style.css" media-type="text/css"/>',
      '<item id="cover-img" href="cover.jpg" media-type="image/jpeg"/>',
      '<item id="far" href="../../escape.xhtml" media-type="application/xhtml+xml"/>',
    ].join('\n'),
  });

  it('finds the content documents and marks the cover', () => {
    expect(rootfilePath('<container><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="x"/></rootfiles></container>')).toBe('OEBPS/content.opf');
    expect([...contentDocuments(opf, 'OEBPS/content.opf')]).toEqual(['OEBPS/text/ch 1.xhtml', 'OEBPS/ch2.html']);
    expect(markCoverImage(opf)).toContain('<item id="cover-img" href="cover.jpg" media-type="image/jpeg" properties="cover-image"/>');
    const withProperties = markCoverImage(opf.replace('media-type="image/jpeg"/>', 'media-type="image/jpeg" properties="nav"/>'));
    expect(withProperties).toContain('properties="nav cover-image"');
  });
});

describe('converting a book', () => {
  async function book(dir: string): Promise<string> {
    const path = join(dir, 'book.epub');
    const cover = await jpeg(60, 90);
    await writeEpub(path, {
      opf: opfDocument({
        metadata: '<dc:title>T</dc:title><meta name="cover" content="cover-img"/>',
        manifest: [
          '<item id="ch1" href="ch1.xhtml" media-type="application/xhtml+xml"/>',
          '<item id="ch2" href="ch2.xhtml" media-type="application/xhtml+xml"/>',
          '<item id="cover-img" href="images/cover.jpg" media-type="image/jpeg"/>',
          '<item id="css" href="style.css" media-type="text/css"/>',
        ].join('\n'),
        spine: '<itemref idref="ch1"/><itemref idref="ch2"/>',
      }),
      files: {
        'OEBPS/ch1.xhtml': xhtmlPage('<h1>One</h1><p>It was a dark night. The wind howled!</p><p><img src="images/cover.jpg" alt="c"/></p>'),
        'OEBPS/ch2.xhtml': `\ufeff${xhtmlPage('<p>Second chapter. Ends here.</p>')}`,
        'OEBPS/images/cover.jpg': cover,
        'OEBPS/style.css': 'p { text-indent: 1em; }',
        'OEBPS/.DS_Store': 'junk',
        '__MACOSX/OEBPS/._ch1.xhtml': 'junk',
      },
    });
    return path;
  }

  it('writes a valid archive: mimetype first and stored, documents that parse and carry spans, the rest untouched', async () => {
    tmp = makeTempDir();
    const input = await book(tmp.dir);
    const output = join(tmp.dir, 'book.kepub.epub');
    const spans = await convertToKepub(input, output);
    const entries = await readZip(output);
    expect(entries[0]).toMatchObject({ name: 'mimetype', compressionMethod: 0 });
    expect(entries[0]?.data.toString()).toBe('application/epub+zip');
    const names = entries.map((e) => e.name);
    expect(names).not.toContain('OEBPS/.DS_Store');
    expect(names.some((n) => n.startsWith('__MACOSX'))).toBe(false);
    const original = await readZip(input);
    const byName = (list: Entry[], name: string): Buffer => list.find((e) => e.name === name)?.data ?? Buffer.alloc(0);
    expect(byName(entries, 'OEBPS/images/cover.jpg').equals(byName(original, 'OEBPS/images/cover.jpg'))).toBe(true);
    expect(byName(entries, 'OEBPS/style.css').toString()).toBe('p { text-indent: 1em; }');
    for (const name of ['OEBPS/ch1.xhtml', 'OEBPS/ch2.xhtml']) {
      const text = byName(entries, name).toString('utf8').replace(/^\ufeff/, '');
      expect(XMLValidator.validate(text), name).toBe(true);
      expect(spanIds(text).length).toBeGreaterThan(1);
    }
    // The byte-order mark of the second chapter survives.
    expect(byName(entries, 'OEBPS/ch2.xhtml').subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    expect(byName(entries, 'OEBPS/content.opf').toString()).toContain('properties="cover-image"');
    expect(XMLValidator.validate(byName(entries, 'OEBPS/content.opf').toString())).toBe(true);
    expect(spans['OEBPS/ch1.xhtml']?.ids).toEqual(['kobo.0.1', 'kobo.1.1', 'kobo.1.2', 'kobo.2.1']);
  });

  it('copies documents in another encoding as they are', async () => {
    tmp = makeTempDir();
    const input = join(tmp.dir, 'latin.epub');
    const latin = Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>t</title></head><body><p>Caf\xe9. Ol\xe9.</p></body></html>', 'latin1');
    await writeEpub(input, { opf: opfDocument({ metadata: '<dc:title>T</dc:title>', manifest: '<item id="c" href="c.xhtml" media-type="application/xhtml+xml"/>', spine: '<itemref idref="c"/>' }), files: { 'OEBPS/c.xhtml': latin } });
    const output = join(tmp.dir, 'latin.kepub.epub');
    await convertToKepub(input, output);
    const entries = await readZip(output);
    expect(entries.find((e) => e.name === 'OEBPS/c.xhtml')?.data.equals(latin)).toBe(true);
  });

  it('refuses archives that are not EPUBs, writing nothing', async () => {
    tmp = makeTempDir();
    const input = join(tmp.dir, 'not.epub');
    await writeZip(input, [{ name: 'readme.txt', data: 'hello' }]);
    await expect(convertToKepub(input, join(tmp.dir, 'out.epub'))).rejects.toMatchObject({ code: 'CORRUPT' });
    writeFileSync(join(tmp.dir, 'garbage.epub'), 'not a zip at all');
    await expect(convertToKepub(join(tmp.dir, 'garbage.epub'), join(tmp.dir, 'out2.epub'))).rejects.toBeDefined();
    expect(() => statSync(join(tmp?.dir ?? '', 'out.epub'))).toThrow();
  });

  it('converts once into the cache, and remembers books that cannot be converted', async () => {
    tmp = makeTempDir();
    const input = await book(tmp.dir);
    const cache = join(tmp.dir, 'cache');
    const source = { path: input, fingerprint: 'abc:123:456', hyphenate: false };
    const [a, b] = await Promise.all([kepubFor(cache, source), kepubFor(cache, source)]);
    expect(a).toEqual(b);
    if (a.kind !== 'converted') throw new Error('not converted');
    const made = statSync(a.path).mtimeMs;
    const again = await kepubFor(cache, source);
    expect(again).toEqual(a);
    expect(readFileSync(a.path).length).toBeGreaterThan(100);
    expect(statSync(a.path).mtimeMs).toBeGreaterThanOrEqual(made);
    expect((await cachedSpanMap(cache, 'abc:123:456'))?.['OEBPS/ch2.xhtml']?.ids).toEqual(['kobo.1.1', 'kobo.1.2']);
    // Another option is another file.
    const hyphenated = await kepubFor(cache, { ...source, hyphenate: true });
    expect(hyphenated.kind === 'converted' && hyphenated.path !== a.path).toBe(true);

    const broken = join(tmp.dir, 'broken.epub');
    writeFileSync(broken, 'PK not really');
    const failed = await kepubFor(cache, { path: broken, fingerprint: 'broken', hyphenate: false });
    expect(failed.kind).toBe('failed');
    expect((await kepubFor(cache, { path: broken, fingerprint: 'broken', hyphenate: false })).kind).toBe('failed');
  });

  it('drops the least recently served conversions past the size budget', async () => {
    tmp = makeTempDir();
    const input = await book(tmp.dir);
    const cache = join(tmp.dir, 'cache');
    const first = await kepubFor(cache, { path: input, fingerprint: 'one', hyphenate: false }, 1);
    const second = await kepubFor(cache, { path: input, fingerprint: 'two', hyphenate: false }, 1);
    expect(first.kind === 'converted' && second.kind === 'converted').toBe(true);
    if (first.kind !== 'converted' || second.kind !== 'converted') return;
    expect(() => statSync(first.path)).toThrow();
  });

  it('announces download sizes from the catalog and the conversions already seen, without reading the disk', async () => {
    tmp = makeTempDir();
    const input = await book(tmp.dir);
    const cache = join(tmp.dir, 'cache');
    const { size, mtimeMs } = statSync(input);
    const fingerprint = kepubFingerprint('known-sizes', 41, size, mtimeMs);
    const primary: KoboPrimaryFile = { id: 41, bookType: 'EPUB', sizeKb: Math.round(size / 1024), sizeBytes: size, missing: false, fixedLayout: false, hash: 'known-sizes', fingerprint };
    const server: KoboServerSettings = { convertToKepub: true, conversionLimitInMb: 100, convertCbxToEpub: false, conversionLimitInMbForCbx: 100, forceEnableHyphenation: false, conversionImageCompressionPercentage: 85, forwardToKoboStore: false };
    // Unconverted: the size the catalog holds. Converted: unknown until a conversion was made or found.
    expect(knownDownloadSize(primary, { ...server, convertToKepub: false })).toBe(size);
    expect(knownDownloadSize({ ...primary, fixedLayout: true }, server)).toBe(size);
    expect(knownDownloadSize(primary, server)).toBeUndefined();
    expect(knownDownloadSize({ ...primary, sizeBytes: null }, { ...server, convertToKepub: false })).toBeUndefined();
    const made = await kepubFor(cache, { path: input, fingerprint, hyphenate: false });
    if (made.kind !== 'converted') throw new Error('not converted');
    expect(made.size).toBe(statSync(made.path).size);
    expect(knownDownloadSize(primary, server)).toBe(made.size);
    // Other options are another conversion, not made yet.
    expect(knownDownloadSize(primary, { ...server, forceEnableHyphenation: true })).toBeUndefined();
    // A conversion dropped from the cache is forgotten: the next sync looks at the disk again.
    await kepubFor(cache, { path: input, fingerprint: 'known-sizes-other', hyphenate: false }, 1);
    expect(() => statSync(made.path)).toThrow();
    expect(knownDownloadSize(primary, server)).toBeUndefined();
    // A book that cannot be converted is sent as it is: its own size.
    const broken = join(tmp.dir, 'broken.epub');
    writeFileSync(broken, 'PK not really');
    const failing: KoboPrimaryFile = { ...primary, id: 42, sizeBytes: 13, fingerprint: 'known-sizes-broken' };
    expect((await kepubFor(cache, { path: broken, fingerprint: 'known-sizes-broken', hyphenate: false })).kind).toBe('failed');
    expect(knownDownloadSize(failing, server)).toBe(13);
  });
});

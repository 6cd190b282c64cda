import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FormatError } from '../../src/core/formats/errors.ts';
import { PDF_LIMITS, extractPdf } from '../../src/core/formats/pdf.ts';
import { coverSize } from '../../src/core/formats/pdf-cover.ts';
import { openPdf } from '../../src/core/formats/pdf-loader.ts';
import { breakStartXref, buildEncryptedPdf, buildPdf, writePdf, xmpPacket } from '../helpers/pdf-fixtures.ts';
import { expectFormatError } from '../helpers/format-assertions.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';

let fixture: TempDir;
beforeAll(() => {
  fixture = makeTempDir();
});
afterAll(() => fixture.remove());


async function averageColour(image: Buffer): Promise<[number, number, number]> {
  const { data } = await sharp(image).resize(1, 1).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return [data[0]!, data[1]!, data[2]!];
}

describe('extractPdf: Info dictionary', () => {
  it('reads title, authors, subject, keywords, creation date, custom publisher and language', async () => {
    const file = await writePdf(fixture, 'info.pdf', {
      title: '  The Long   Road ',
      author: 'Ann Author & Bob Writer',
      subject: 'A book about roads.',
      keywords: ['Travel;', 'Maps, Roads'],
      creationDate: new Date(Date.UTC(2019, 3, 21, 12)),
      customInfo: { EBX_PUBLISHER: 'Road Press', Language: 'en', ISBN: '0-306-40615-2' },
    });
    const result = await extractPdf(file, { skipCover: true });
    expect(result.bookType).toBe('PDF');
    expect(result.cover).toBeUndefined();
    expect(result.metadata).toMatchObject({
      title: 'The Long Road',
      authors: ['Ann Author', 'Bob Writer'],
      description: 'A book about roads.',
      categories: ['Travel', 'Maps', 'Roads'],
      publishedDate: '2019-04-21',
      publisher: 'Road Press',
      language: 'en',
      isbn10: '0306406152',
      pageCount: 1,
    });
  });

  it('counts pages', async () => {
    const file = await writePdf(fixture, 'pages.pdf', { title: 'Many', pages: 7 });
    const result = await extractPdf(file, { skipCover: true });
    expect(result.metadata.pageCount).toBe(7);
  });

  it('leaves fields absent when the file says nothing', async () => {
    const file = await writePdf(fixture, 'bare.pdf');
    const { metadata } = await extractPdf(file, { skipCover: true });
    expect(metadata.title).toBeUndefined();
    expect(metadata.authors).toEqual([]);
    expect(metadata.categories).toEqual([]);
    expect(metadata.pageCount).toBe(1);
  });
});

describe('extractPdf: XMP', () => {
  const fullXmp = xmpPacket(`
      <dc:title><rdf:Alt><rdf:li xml:lang="de">Der Titel</rdf:li><rdf:li xml:lang="x-default">XMP Title</rdf:li></rdf:Alt></dc:title>
      <dc:creator><rdf:Seq><rdf:li>Carla Creator</rdf:li><rdf:li>Dan Drafter</rdf:li></rdf:Seq></dc:creator>
      <dc:description><rdf:Alt><rdf:li xml:lang="x-default">From XMP.</rdf:li></rdf:Alt></dc:description>
      <dc:publisher><rdf:Bag><rdf:li>XMP House</rdf:li></rdf:Bag></dc:publisher>
      <dc:language><rdf:Bag><rdf:li>fr</rdf:li></rdf:Bag></dc:language>
      <dc:subject><rdf:Bag><rdf:li>Fantasy</rdf:li><rdf:li>Adventure</rdf:li><rdf:li>Favourites</rdf:li></rdf:Bag></dc:subject>
      <dc:identifier>urn:isbn:978-0-306-40615-7</dc:identifier>
      <dc:date><rdf:Seq><rdf:li>2013-11-06</rdf:li></rdf:Seq></dc:date>
      <xmp:CreateDate>2020-01-01T00:00:00Z</xmp:CreateDate>
      <calibre:series rdf:parseType="Resource"><rdf:value>Calibre Saga</rdf:value><calibreSI:series_index>2.00</calibreSI:series_index></calibre:series>
      <booklore:tags><rdf:Bag><rdf:li>Favourites</rdf:li></rdf:Bag></booklore:tags>`);

  it('prefers XMP over the Info dictionary', async () => {
    const file = await writePdf(fixture, 'xmp.pdf', {
      title: 'Info Title',
      author: 'Info Author',
      subject: 'From Info.',
      keywords: ['InfoKeyword'],
      creationDate: new Date(Date.UTC(2001, 0, 1)),
      xmp: fullXmp,
    });
    const { metadata } = await extractPdf(file, { skipCover: true });
    expect(metadata).toMatchObject({
      title: 'XMP Title',
      authors: ['Carla Creator', 'Dan Drafter'],
      description: 'From XMP.',
      publisher: 'XMP House',
      language: 'fr',
      categories: ['Fantasy', 'Adventure'],
      tags: ['Favourites'],
      publishedDate: '2013-11-06',
      isbn13: '9780306406157',
      seriesName: 'Calibre Saga',
      seriesNumber: 2,
    });
    expect(metadata.identifiers.isbn13).toBe('9780306406157');
  });

  it('reads Booklore fields and qualified identifiers, identifiers winning over booklore ids', async () => {
    const file = await writePdf(fixture, 'booklore.pdf', {
      xmp: xmpPacket(`
        <booklore:seriesName>Wheel</booklore:seriesName>
        <booklore:seriesNumber>5</booklore:seriesNumber>
        <booklore:seriesTotal>14</booklore:seriesTotal>
        <booklore:subtitle>New</booklore:subtitle>
        <booklore:Subtitle>Legacy</booklore:Subtitle>
        <booklore:googleId>from-booklore</booklore:googleId>
        <booklore:goodreadsId>36099978</booklore:goodreadsId>
        <booklore:rating>4.5</booklore:rating>
        <booklore:Tags>One; Two</booklore:Tags>
        <calibre:series rdf:parseType="Resource"><rdf:value>Calibre Saga</rdf:value></calibre:series>
        <xmp:Identifier><rdf:Bag>
          <rdf:li rdf:parseType="Resource"><xmpidq:Scheme>GOOGLE</xmpidq:Scheme><rdf:value>from-identifier</rdf:value></rdf:li>
          <rdf:li rdf:parseType="Resource"><xmpidq:Scheme>AMAZON</xmpidq:Scheme><rdf:value>B00TEST123</rdf:value></rdf:li>
          <rdf:li rdf:parseType="Resource"><xmpidq:Scheme>ISBN</xmpidq:Scheme><rdf:value>978 0 13 468599 1</rdf:value></rdf:li>
        </rdf:Bag></xmp:Identifier>
        <prism:isbn>0-306-40615-2</prism:isbn>`),
    });
    const { metadata } = await extractPdf(file, { skipCover: true });
    expect(metadata).toMatchObject({
      seriesName: 'Wheel',
      seriesNumber: 5,
      seriesTotal: 14,
      subtitle: 'New',
      googleId: 'from-identifier',
      goodreadsId: '36099978',
      asin: 'B00TEST123',
      isbn13: '9780134685991',
      isbn10: '0306406152',
      rating: 4.5,
      tags: ['One', 'Two'],
    });
  });

  it('ignores an XMP packet that declares entities and keeps the Info dictionary', async () => {
    const file = await writePdf(fixture, 'xxe.pdf', {
      title: 'Safe Title',
      xmp: `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
        <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
        <rdf:Description xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>&secret;</dc:title></rdf:Description></rdf:RDF></x:xmpmeta>`,
    });
    const { metadata } = await extractPdf(file, { skipCover: true });
    expect(metadata.title).toBe('Safe Title');
  });

  it('ignores a malformed XMP packet', async () => {
    const file = await writePdf(fixture, 'bad-xmp.pdf', { title: 'Still Here', xmp: '<x:xmpmeta><rdf:RDF><unclosed>' });
    const { metadata } = await extractPdf(file, { skipCover: true });
    expect(metadata.title).toBe('Still Here');
  });
});

describe('extractPdf: cover', () => {
  it('renders page one with the page aspect ratio and its colour', async () => {
    const file = await writePdf(fixture, 'red.pdf', { pageSize: [400, 600], fill: [0.8, 0.1, 0.1] });
    const { cover } = await extractPdf(file);
    expect(cover?.mime).toBe('image/jpeg');
    const meta = await sharp(cover!.data).metadata();
    expect(meta.format).toBe('jpeg');
    expect(meta.height).toBe(1000);
    expect(meta.width).toBeGreaterThanOrEqual(665);
    expect(meta.width).toBeLessThanOrEqual(667);
    const [r, g, b] = await averageColour(cover!.data);
    expect(r).toBeGreaterThan(180);
    expect(g).toBeLessThan(60);
    expect(b).toBeLessThan(60);
  });

  it('renders text in a standard font that the PDF does not embed', async () => {
    const file = await writePdf(fixture, 'text.pdf', { pageSize: [400, 600], text: 'WWWW' });
    const { data } = await sharp((await extractPdf(file)).cover!.data).greyscale().raw().toBuffer({ resolveWithObject: true });
    const dark = data.filter((v) => v < 80).length / data.length;
    expect(dark).toBeGreaterThan(0.02);
  });

  it('renders a landscape page with the long side across', async () => {
    const file = await writePdf(fixture, 'landscape.pdf', { pageSize: [842, 595], fill: [0.1, 0.2, 0.9] });
    const meta = await sharp((await extractPdf(file)).cover!.data).metadata();
    expect(meta.width).toBe(1000);
    expect(meta.height).toBe(Math.floor((595 * 1000) / 842));
  });

  it('keeps a 200 × 200 inch page to a 1000 px cover', async () => {
    const file = await writePdf(fixture, 'huge-page.pdf', { pageSize: [14400, 14400], fill: [0.1, 0.7, 0.2] });
    const { cover } = await extractPdf(file);
    const meta = await sharp(cover!.data).metadata();
    expect([meta.width, meta.height]).toEqual([1000, 1000]);
    const [r, g, b] = await averageColour(cover!.data);
    expect(g).toBeGreaterThan(140);
    expect(r).toBeLessThan(80);
    expect(b).toBeLessThan(100);
  });

  it('keeps a sliver page to at least one pixel across', async () => {
    const file = await writePdf(fixture, 'sliver.pdf', { pageSize: [5_000_000, 100] });
    const meta = await sharp((await extractPdf(file)).cover!.data).metadata();
    expect([meta.width, meta.height]).toEqual([1000, 1]);
  });

  it('sizes covers by the long side and the pixel cap', () => {
    expect(coverSize(612, 792, PDF_LIMITS.cover)).toMatchObject({ width: 772, height: 1000 });
    expect(coverSize(1e9, 1e9, { longSide: 10_000, maxPixels: 25_000_000 })).toMatchObject({ width: 5000, height: 5000 });
    expect(coverSize(0, 100, PDF_LIMITS.cover)).toBeUndefined();
    expect(coverSize(Number.NaN, 100, PDF_LIMITS.cover)).toBeUndefined();
  });
});

describe('extractPdf: encryption', () => {
  it('reads a PDF that only has an owner password', async () => {
    const file = fixture.file('owner.pdf');
    fs.writeFileSync(file, buildEncryptedPdf({ userPassword: '', ownerPassword: 'owner-secret', title: 'Owner Locked', fill: [0.9, 0.1, 0.1] }));
    const result = await extractPdf(file);
    expect(result.metadata.title).toBe('Owner Locked');
    const [r, g] = await averageColour(result.cover!.data);
    expect(r).toBeGreaterThan(180);
    expect(g).toBeLessThan(60);
  });

  it('refuses a PDF that needs a user password', async () => {
    const file = fixture.file('user.pdf');
    fs.writeFileSync(file, buildEncryptedPdf({ userPassword: 'user-secret', ownerPassword: 'owner-secret', title: 'Locked', fill: [0, 0, 0] }));
    await expectFormatError(extractPdf(file), 'UNSUPPORTED', /password protected/);
  });
});

describe('extractPdf: hostile input', () => {
  it('rejects a zero-byte file as EMPTY', async () => {
    const file = fixture.file('empty.pdf');
    fs.writeFileSync(file, '');
    await expectFormatError(extractPdf(file), 'EMPTY');
  });

  it('rejects garbage bytes as CORRUPT', async () => {
    const file = fixture.file('garbage.pdf');
    fs.writeFileSync(file, Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 251)));
    await expectFormatError(extractPdf(file), 'CORRUPT', /no %PDF- header/);
  });

  it('rejects a PDF header followed by garbage as CORRUPT', async () => {
    const file = fixture.file('header-only.pdf');
    fs.writeFileSync(file, Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(2048, 0x41)]));
    await expectFormatError(extractPdf(file), 'CORRUPT');
  });

  it('reads what survives of a truncated PDF, or fails with a FormatError', async () => {
    const whole = fs.readFileSync(await writePdf(fixture, 'whole.pdf', { title: 'Cut Short', pages: 4, fill: [0.2, 0.2, 0.8] }));
    for (const fraction of [0.5, 0.1]) {
      const file = fixture.file(`truncated-${fraction}.pdf`);
      fs.writeFileSync(file, whole.subarray(0, Math.floor(whole.length * fraction)));
      try {
        const result = await extractPdf(file);
        expect(result.bookType).toBe('PDF');
      } catch (error) {
        expect(error).toBeInstanceOf(FormatError);
      }
    }
  });

  it('repairs a PDF whose startxref points to the wrong place', async () => {
    const file = fixture.file('bad-xref.pdf');
    fs.writeFileSync(file, breakStartXref(await buildPdf({ title: 'Repaired', pages: 2 })));
    const { metadata } = await extractPdf(file, { skipCover: true });
    expect(metadata).toMatchObject({ title: 'Repaired', pageCount: 2 });
  });

  it('refuses quickly to repair damaged PDFs larger than the in-memory limit', async () => {
    const limits = { ...PDF_LIMITS, maxInMemoryBytes: 64 * 1024 };
    const padded = await buildPdf({ title: 'Padded', pages: 2, paddingBytes: 512 * 1024 });
    const truncated = fixture.file('big-truncated.pdf');
    fs.writeFileSync(truncated, padded.subarray(0, 400 * 1024));
    const brokenXref = fixture.file('big-bad-xref.pdf');
    fs.writeFileSync(brokenXref, breakStartXref(padded));
    const started = performance.now();
    await expectFormatError(extractPdf(truncated, {}, limits), 'CORRUPT', /too large to repair in memory/);
    await expectFormatError(extractPdf(brokenXref, {}, limits), 'CORRUPT', /does not point at a cross-reference table/);
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it('fails cleanly when pdf.js asks for more than it may hold in one read', async () => {
    const file = await writePdf(fixture, 'large-read.pdf', { title: 'Large Read', pages: 2, paddingBytes: 512 * 1024 });
    await expectFormatError(extractPdf(file, {}, { ...PDF_LIMITS, maxInMemoryBytes: 64 * 1024 }), 'TOO_LARGE', /asked for \d+ bytes at once/);
  });

  it('gives up on a PDF that takes too long to open, without leaving pdf.js half torn down', async () => {
    const file = await writePdf(fixture, 'slow.pdf', { title: 'Slow', pages: 2, paddingBytes: 512 * 1024 });
    await expectFormatError(extractPdf(file, {}, { ...PDF_LIMITS, openTimeoutMs: 1 }), 'CORRUPT', /did not finish within 1 ms/);
    // The same file opens normally afterwards.
    expect((await extractPdf(file, { skipCover: true })).metadata.title).toBe('Slow');
  });

  it('reports a missing file as IO', async () => {
    await expectFormatError(extractPdf(fixture.file('missing.pdf')), 'IO');
  });

  it('refuses files above the configured size cap as TOO_LARGE', async () => {
    const file = await writePdf(fixture, 'capped.pdf', { title: 'Big' });
    await expectFormatError(extractPdf(file, {}, { ...PDF_LIMITS, maxFileBytes: 100 }), 'TOO_LARGE', /more than the 100 /);
  });

  it('prints nothing while reading broken files', async () => {
    const spies = [vi.spyOn(console, 'log'), vi.spyOn(console, 'warn'), vi.spyOn(console, 'info'), vi.spyOn(console, 'error')];
    const stdout = vi.spyOn(process.stdout, 'write');
    try {
      const whole = fs.readFileSync(await writePdf(fixture, 'noisy.pdf', { title: 'Noisy', pages: 3 }));
      const file = fixture.file('noisy-cut.pdf');
      fs.writeFileSync(file, whole.subarray(0, Math.floor(whole.length * 0.6)));
      await extractPdf(file).catch(() => undefined);
      await extractPdf(fixture.file('header-only.pdf')).catch(() => undefined);
      for (const spy of spies) expect(spy).not.toHaveBeenCalled();
      expect(stdout.mock.calls.filter(([chunk]) => String(chunk).includes('Warning'))).toEqual([]);
    } finally {
      for (const spy of spies) spy.mockRestore();
      stdout.mockRestore();
    }
  });
});

describe('extractPdf: resources', () => {
  it('reads only the byte ranges it needs, not the whole file', async () => {
    const file = await writePdf(fixture, 'padded.pdf', { title: 'Padded', pages: 2, fill: [0.5, 0.5, 0.5], paddingBytes: 16 * 1024 * 1024 });
    const size = fs.statSync(file).size;
    let bytesRead = 0;
    const pdf = await openPdf(file, size, {
      timeoutMs: 10_000,
      maxInMemoryBytes: PDF_LIMITS.maxInMemoryBytes,
      onRead: (_begin, bytes) => {
        bytesRead += bytes;
      },
    });
    try {
      await pdf.document.getMetadata();
      const page = await pdf.document.getPage(1);
      expect(page.view).toEqual([0, 0, 420, 595]);
    } finally {
      await pdf.close();
    }
    expect(bytesRead).toBeGreaterThan(0);
    expect(bytesRead).toBeLessThan(size / 4);
  });

  it('does not load pdf.js until a PDF is read', () => {
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
    const script = `
      import { registerHooks } from 'node:module';
      const seen = [];
      registerHooks({ resolve(specifier, context, next) { if (specifier.includes('pdfjs-dist')) seen.push(specifier); return next(specifier, context); } });
      await import(${JSON.stringify(path.join(root, 'src/core/formats/pdf.ts'))});
      process.stdout.write(JSON.stringify(seen));`;
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
    expect(JSON.parse(output)).toEqual([]);
  });
});

describe('extractPdf: a page one that is one JPEG', () => {
  const photo = (width: number, height: number): Promise<Buffer> =>
    sharp({ create: { width, height, channels: 3, background: '#8a4' } }).composite([{ input: { create: { width: Math.floor(width / 2), height, channels: 3, background: '#24c' } }, left: 0, top: 0 }]).jpeg({ quality: 88 }).toBuffer();

  for (const objectStreams of [false, true]) {
    it(`gives the stored JPEG as the cover, without rendering (${objectStreams ? 'object streams' : 'xref table'})`, async () => {
      const jpeg = await photo(600, 850);
      const file = await writePdf(fixture, `jpeg-cover-${objectStreams}.pdf`, { title: 'Scanned', author: 'Ann Scanner', pages: 9, image: { jpeg }, objectStreams });
      const result = await extractPdf(file);
      expect(result.cover?.mime).toBe('image/jpeg');
      expect(result.cover?.data.equals(jpeg)).toBe(true);
      expect(result.metadata).toMatchObject({ title: 'Scanned', authors: ['Ann Scanner'], pageCount: 9 });
    });
  }

  it('renders the page when the JPEG covers only part of it', async () => {
    const jpeg = await photo(300, 400);
    const file = await writePdf(fixture, 'jpeg-half.pdf', { image: { jpeg, box: [0, 0, 210, 300] } });
    const result = await extractPdf(file);
    expect(result.cover?.mime).toBe('image/jpeg');
    expect(result.cover?.data.equals(jpeg)).toBe(false);
    // The rendered page is the page's shape (420 × 595), not the image's.
    const meta = await sharp(result.cover!.data).metadata();
    expect(Math.abs(meta.width! / meta.height! - 420 / 595)).toBeLessThan(0.01);
  });

  it('renders the page when something else is drawn over the JPEG', async () => {
    const jpeg = await photo(600, 850);
    const file = await writePdf(fixture, 'jpeg-and-text.pdf', { image: { jpeg }, text: 'TITLE' });
    const result = await extractPdf(file);
    expect(result.cover?.data.equals(jpeg)).toBe(false);
    expect(result.cover?.mime).toBe('image/jpeg');
  });

  it('falls back to pdf.js for an encrypted PDF and a damaged cross-reference table', async () => {
    const jpeg = await photo(600, 850);
    const damaged = fixture.file('jpeg-damaged.pdf');
    fs.writeFileSync(damaged, breakStartXref(await buildPdf({ title: 'Damaged', pages: 3, image: { jpeg } })));
    const result = await extractPdf(damaged);
    expect(result.metadata).toMatchObject({ title: 'Damaged', pageCount: 3 });
    // pdf.js rebuilt the index and rendered the page: the same picture, encoded anew.
    expect(result.cover?.data.equals(jpeg)).toBe(false);
    expect(result.cover?.mime).toBe('image/jpeg');
  });
});

describe('extractPdf with blocking reads (scan workers)', () => {
  it('reads the same metadata and cover as through the thread pool', async () => {
    const jpeg = await sharp({ create: { width: 600, height: 850, channels: 3, background: '#a52' } }).jpeg({ quality: 88 }).toBuffer();
    const files = [
      await writePdf(fixture, 'blocking-jpeg.pdf', { title: 'Blocking Scan', author: 'Ann Scanner', pages: 5, image: { jpeg }, objectStreams: true }),
      await writePdf(fixture, 'blocking-text.pdf', { title: 'Blocking Text', pages: 3, text: 'Hello' }),
      await writePdf(fixture, 'blocking-xmp.pdf', { title: 'Info Title', xmp: xmpPacket('<dc:title><rdf:Alt><rdf:li xml:lang="x-default">XMP Title</rdf:li></rdf:Alt></dc:title>') }),
    ];
    for (const file of files) expect(await extractPdf(file, { blocking: true }), file).toEqual(await extractPdf(file));
    expect((await extractPdf(files[0]!, { blocking: true })).cover?.data.equals(jpeg)).toBe(true);
    expect((await extractPdf(files[2]!, { blocking: true })).metadata.title).toBe('XMP Title');
  });

  it('fails as the thread pool does, and a FIFO named .pdf is refused at once rather than waited on', async () => {
    const empty = fixture.file('blocking-empty.pdf');
    fs.writeFileSync(empty, '');
    const garbage = fixture.file('blocking-garbage.pdf');
    fs.writeFileSync(garbage, Buffer.alloc(4096, 0x41));
    const fifo = fixture.file('blocking-fifo.pdf');
    execFileSync('mkfifo', [fifo]);
    for (const blocking of [false, true]) {
      await expectFormatError(extractPdf(empty, { blocking }), 'EMPTY');
      await expectFormatError(extractPdf(garbage, { blocking }), 'CORRUPT', /no %PDF- header/);
      await expectFormatError(extractPdf(fixture.file('blocking-missing.pdf'), { blocking }), 'IO');
      await expectFormatError(extractPdf(fifo, { blocking }), 'IO', /not a regular file/);
    }
  });
});

describe('extractPdf: read without pdf.js', () => {
  it('follows an incremental update to the newest Info dictionary, as pdf.js does', async () => {
    const base = Buffer.from(await buildPdf({ title: 'Old Title', pages: 2 }));
    const text = base.toString('latin1');
    const size = Number(/\/Size (\d+)/.exec(text)?.[1]);
    const root = /\/Root (\d+ \d+ R)/.exec(text)?.[1] ?? '';
    const prev = Number(/startxref\s+(\d+)/.exec(text.slice(text.lastIndexOf('startxref')))?.[1]);
    const object = `${size} 0 obj\n<< /Title (New Title) /Author <FEFF004100F1006E0061> >>\nendobj\n`;
    const xrefAt = base.length + object.length;
    const update = `${object}xref\n${size} 1\n${String(base.length).padStart(10, '0')} 00000 n \ntrailer\n<< /Size ${size + 1} /Root ${root} /Info ${size} 0 R /Prev ${prev} >>\nstartxref\n${xrefAt}\n%%EOF\n`;
    const file = fixture.file('updated.pdf');
    fs.writeFileSync(file, Buffer.concat([base, Buffer.from(update, 'latin1')]));
    const direct = await extractPdf(file, { skipCover: true });
    const throughPdfJs = await extractPdf(file);
    expect(direct.metadata).toMatchObject({ title: 'New Title', authors: ['Añna'], pageCount: 2 });
    expect(throughPdfJs.metadata).toEqual(direct.metadata);
  });

  it('decodes titles in UTF-16 as pdf.js does', async () => {
    const file = await writePdf(fixture, 'unicode.pdf', { title: 'Ünïcødé 東京の夜 📚', author: 'Zoë Ærø', objectStreams: true });
    const result = await extractPdf(file, { skipCover: true });
    expect(result.metadata).toMatchObject({ title: 'Ünïcødé 東京の夜 📚', authors: ['Zoë Ærø'] });
  });
});

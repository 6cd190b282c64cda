import fs from 'node:fs';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectFormatError } from '../helpers/format-assertions.ts';
import { extractFb2 } from '../../src/core/formats/fb2.ts';
import { jpeg, makeTempDir, png, writeZip, writeZipWithHostileNames, type TempDir } from '../helpers/epub-fixtures.ts';
import { fb2Document, writeFb2, writeFb2Zip, type Fb2Spec } from '../helpers/fb2-fixtures.ts';

let tmp: TempDir;
beforeAll(() => {
  tmp = makeTempDir();
});
afterAll(() => tmp.remove());


const fullTitleInfo = `
  <genre>sf_fantasy</genre>
  <genre>adventure</genre>
  <author><first-name>Аркадий</first-name><middle-name>Натанович</middle-name><last-name>Стругацкий</last-name></author>
  <author><first-name>Boris</first-name><last-name>Strugatsky</last-name></author>
  <author><nickname>Anonymous Fan</nickname></author>
  <book-title>Пикник на обочине</book-title>
  <annotation><p>First &amp; foremost paragraph.</p><empty-line/><p>Second <emphasis>emphasised</emphasis> paragraph&#8230;</p></annotation>
  <keywords>zone, stalker; aliens</keywords>
  <date value="1971-05-01">1971</date>
  <coverpage><image l:href="#cover.jpg"/></coverpage>
  <lang>ru</lang>
  <sequence name="Мир Полудня" number="7"/>`;

const publishInfo = `
  <book-name>Пикник на обочине</book-name>
  <publisher>АСТ</publisher>
  <city>Москва</city>
  <year>2005</year>
  <isbn>978-0-306-40615-7</isbn>`;

describe('extractFb2 — plain .fb2', () => {
  let file: string;

  beforeAll(async () => {
    file = tmp.file('picnic.fb2');
    writeFb2(file, {
      titleInfo: fullTitleInfo,
      publishInfo,
      documentInfo: '<author><nickname>scanner</nickname></author><program-used>FB Editor</program-used><id>abc-123</id>',
      bodyParagraphs: 50,
      binaries: [
        { id: 'illustration.png', contentType: 'image/png', data: await png(20, 20) },
        { id: 'cover.jpg', contentType: 'image/jpeg', data: await jpeg(210, 320) },
      ],
    });
  });

  it('reads title-info and publish-info', async () => {
    const { bookType, archiveType, metadata } = await extractFb2(file);
    expect(bookType).toBe('FB2');
    expect(archiveType).toBeUndefined();
    expect(metadata.title).toBe('Пикник на обочине');
    expect(metadata.authors).toEqual(['Аркадий Натанович Стругацкий', 'Boris Strugatsky', 'Anonymous Fan']);
    expect(metadata.categories).toEqual(['sf_fantasy', 'adventure', 'zone', 'stalker', 'aliens']);
    expect(metadata.description).toBe('First & foremost paragraph.\nSecond emphasised paragraph…');
    expect(metadata.language).toBe('ru');
    expect(metadata.seriesName).toBe('Мир Полудня');
    expect(metadata.seriesNumber).toBe(7);
    expect(metadata.publisher).toBe('АСТ');
    expect(metadata.publishedDate).toBe('2005-01-01');
    expect(metadata.isbn13).toBe('9780306406157');
    expect(metadata.identifiers).toEqual({ isbn: '9780306406157' });
  });

  it('decodes the coverpage binary, skipping other binaries', async () => {
    const { cover } = await extractFb2(file);
    expect(cover?.mime).toBe('image/jpeg');
    const info = await sharp(cover?.data).metadata();
    expect([info.format, info.width, info.height]).toEqual(['jpeg', 210, 320]);
  });

  it('skips the cover when asked', async () => {
    const result = await extractFb2(file, { skipCover: true });
    expect(result.cover).toBeUndefined();
    expect(result.metadata.title).toBe('Пикник на обочине');
  });

  it('uses the title-info date when there is no publish-info year', async () => {
    const f = tmp.file('dated.fb2');
    writeFb2(f, { titleInfo: '<book-title>Dated</book-title><date>12.03.1999</date>' });
    const { metadata, cover } = await extractFb2(f);
    expect(metadata.publishedDate).toBe('1999-03-12');
    expect(metadata.authors).toEqual([]);
    expect(cover).toBeUndefined();
  });
});

describe('extractFb2 — encodings, archives and big books', () => {
  it('honours a windows-1251 XML declaration', async () => {
    const file = tmp.file('cp1251.fb2');
    writeFb2(file, {
      encoding: 'windows-1251',
      titleInfo: '<author><first-name>Лев</first-name><last-name>Толстой</last-name></author><book-title>Война и мир — том первый</book-title><lang>ru</lang><annotation><p>Роман-эпопея «Война и мир».</p></annotation>',
    });
    expect(fs.readFileSync(file).includes(Buffer.from('Толстой', 'utf8'))).toBe(false);
    const { metadata } = await extractFb2(file);
    expect(metadata.title).toBe('Война и мир — том первый');
    expect(metadata.authors).toEqual(['Лев Толстой']);
    expect(metadata.description).toBe('Роман-эпопея «Война и мир».');
  });

  it('reads a .fb2.zip holding one .fb2', async () => {
    const file = tmp.file('zipped.fb2.zip');
    await writeFb2Zip(file, {
      titleInfo: '<book-title>Zipped Tale</book-title><author><first-name>Zed</first-name><last-name>Zip</last-name></author><coverpage><image xlink:href="#c1" xmlns:xlink="http://www.w3.org/1999/xlink"/></coverpage><sequence name="Archives" number="2.5"/>',
      binaries: [{ id: 'c1', contentType: 'image/png', data: await png(90, 140) }],
    });
    const { bookType, archiveType, metadata, cover } = await extractFb2(file);
    expect([bookType, archiveType]).toEqual(['FB2', 'ZIP']);
    expect(metadata.title).toBe('Zipped Tale');
    expect(metadata.authors).toEqual(['Zed Zip']);
    expect([metadata.seriesName, metadata.seriesNumber]).toEqual(['Archives', 2.5]);
    const info = await sharp(cover?.data).metadata();
    expect([info.format, info.width, info.height]).toEqual(['png', 90, 140]);
  });

  it('falls back to an image binary named like a cover when there is no coverpage', async () => {
    const file = tmp.file('named-cover.fb2');
    writeFb2(file, {
      titleInfo: '<book-title>No Coverpage</book-title>',
      binaries: [
        { id: 'pic1.png', contentType: 'image/png', data: await png(10, 10) },
        { id: 'Cover_front.jpg', contentType: 'image/jpeg', data: await jpeg(77, 111) },
      ],
    });
    const info = await sharp((await extractFb2(file)).cover?.data).metadata();
    expect([info.width, info.height]).toEqual([77, 111]);
  });

  it('finds the cover at the end of a large book full of binaries', async () => {
    const file = tmp.file('large.fb2');
    const filler = Buffer.alloc(512 * 1024, 7);
    writeFb2(file, {
      titleInfo: '<book-title>Heavy</book-title><coverpage><image l:href="#the-cover"/></coverpage>',
      bodyParagraphs: 20_000,
      binaries: [
        ...Array.from({ length: 12 }, (_, i) => ({ id: `img${i}.bin`, contentType: 'application/octet-stream', data: filler })),
        { id: 'the-cover', contentType: 'image/jpeg', data: await jpeg(150, 230) },
      ],
    });
    expect(fs.statSync(file).size).toBeGreaterThan(8 * 1024 * 1024);
    const { metadata, cover } = await extractFb2(file);
    expect(metadata.title).toBe('Heavy');
    const info = await sharp(cover?.data).metadata();
    expect([info.width, info.height]).toEqual([150, 230]);
  });

  it('keeps the metadata when the cover binary is cut off', async () => {
    const whole = fb2Document({ titleInfo: '<book-title>Cut Cover</book-title><coverpage><image l:href="#c"/></coverpage>', binaries: [{ id: 'c', contentType: 'image/jpeg', data: await jpeg(300, 300) }] });
    const file = tmp.file('cut-cover.fb2');
    fs.writeFileSync(file, whole.subarray(0, whole.indexOf('</binary>') - 100));
    const { metadata, cover } = await extractFb2(file);
    expect(metadata.title).toBe('Cut Cover');
    expect(cover).toBeUndefined();
  });
});

describe('extractFb2 — hostile input', () => {
  const minimal: Fb2Spec = { titleInfo: '<book-title>Hostile</book-title>' };

  it('rejects a zero-byte .fb2 and a zero-byte .fb2.zip as EMPTY', async () => {
    const plain = tmp.file('zero.fb2');
    const zipped = tmp.file('zero.fb2.zip');
    fs.writeFileSync(plain, '');
    fs.writeFileSync(zipped, '');
    await expectFormatError(extractFb2(plain), 'EMPTY');
    await expectFormatError(extractFb2(zipped), 'EMPTY');
  });

  it('rejects garbage bytes as CORRUPT', async () => {
    const file = tmp.file('garbage.fb2');
    fs.writeFileSync(file, Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 37) % 256)));
    await expectFormatError(extractFb2(file), 'CORRUPT');
  });

  it('rejects a document cut inside its description as CORRUPT', async () => {
    const whole = fb2Document({ titleInfo: fullTitleInfo, publishInfo });
    const file = tmp.file('truncated.fb2');
    fs.writeFileSync(file, whole.subarray(0, whole.indexOf('</title-info>')));
    await expectFormatError(extractFb2(file), 'CORRUPT');
  });

  it('rejects a malformed description as CORRUPT', async () => {
    const file = tmp.file('malformed.fb2');
    writeFb2(file, { titleInfo: '<book-title>Broken</author>' });
    await expectFormatError(extractFb2(file), 'CORRUPT');
  });

  it('rejects entity declarations (billion laughs) as UNSAFE', async () => {
    const file = tmp.file('laughs.fb2');
    writeFb2(file, {
      prolog: '<!DOCTYPE FictionBook [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>',
      titleInfo: '<book-title>&c;</book-title>',
    });
    await expectFormatError(extractFb2(file), 'UNSAFE');
  });

  it('rejects an external entity as UNSAFE', async () => {
    const file = tmp.file('xxe.fb2');
    writeFb2(file, { prolog: '<!DOCTYPE FictionBook [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>', titleInfo: '<book-title>&xxe;</book-title>' });
    await expectFormatError(extractFb2(file), 'UNSAFE');
  });

  it('rejects a .fb2.zip that is not a zip, or holds no .fb2, as CORRUPT', async () => {
    const notZip = tmp.file('fake.fb2.zip');
    fs.writeFileSync(notZip, fb2Document(minimal));
    await expectFormatError(extractFb2(notZip), 'CORRUPT');
    const noFb2 = tmp.file('nofb2.fb2.zip');
    await writeZip(noFb2, [{ name: 'readme.txt', data: 'nothing here' }]);
    await expectFormatError(extractFb2(noFb2), 'CORRUPT');
  });

  it('rejects a .fb2.zip with a ../ entry as UNSAFE', async () => {
    const file = tmp.file('traversal.fb2.zip');
    await writeZipWithHostileNames(file, [{ name: '../../book.fb2', data: fb2Document(minimal) }]);
    await expectFormatError(extractFb2(file), 'UNSAFE');
  });
});

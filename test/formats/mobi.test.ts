import fs from 'node:fs';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectFormatError } from '../helpers/format-assertions.ts';
import { extractMobi } from '../../src/core/formats/mobi.ts';
import { jpeg, makeTempDir, png, type TempDir } from '../helpers/epub-fixtures.ts';
import { mobiBook, PALM_HEADER_BYTES, RECORD_ENTRY_BYTES, writeMobi, type MobiSpec } from '../helpers/mobi-fixtures.ts';

let tmp: TempDir;
beforeAll(() => {
  tmp = makeTempDir();
});
afterAll(() => tmp.remove());


async function dimensions(data: Buffer | undefined): Promise<[string | undefined, number | undefined, number | undefined]> {
  const info = await sharp(data).metadata();
  return [info.format, info.width, info.height];
}

describe('extractMobi — MOBI', () => {
  let file: string;

  beforeAll(async () => {
    file = tmp.file('book.mobi');
    writeMobi(file, {
      databaseName: 'The_Left_Hand_of_Darkness',
      fullName: 'The Left Hand of Darkness (full name)',
      locale: 0x0409,
      exth: [
        [100, 'Ursula K. Le Guin'],
        [100, 'Second Author & Third Author'],
        [101, 'Ace Books'],
        [103, '<p>Genly Ai is sent to Winter&#8230;</p><p>A second &amp; final paragraph.</p>'],
        [104, '978-0-306-40615-7'],
        [105, 'Science Fiction'],
        [105, 'Classics'],
        [106, '1969-03-01T00:00:00+00:00'],
        [113, 'B000FC1PJI'],
        [503, 'The Left Hand of Darkness'],
        [524, 'en-US'],
        [202, 0],
        [201, 1],
      ],
      images: [await png(40, 60), await jpeg(320, 480), await png(5, 5)],
    });
  });

  it('reads the EXTH metadata', async () => {
    const { bookType, archiveType, fixedLayout, metadata } = await extractMobi(file);
    expect(bookType).toBe('MOBI');
    expect(archiveType).toBeUndefined();
    expect(fixedLayout).toBe(false);
    expect(metadata.title).toBe('The Left Hand of Darkness');
    expect(metadata.authors).toEqual(['Ursula K. Le Guin', 'Second Author', 'Third Author']);
    expect(metadata.publisher).toBe('Ace Books');
    expect(metadata.description).toBe('Genly Ai is sent to Winter…\nA second & final paragraph.');
    expect(metadata.categories).toEqual(['Science Fiction', 'Classics']);
    expect(metadata.publishedDate).toBe('1969-03-01');
    expect(metadata.language).toBe('en-US');
    expect(metadata.isbn13).toBe('9780306406157');
    expect(metadata.asin).toBe('B000FC1PJI');
    expect(metadata.identifiers).toEqual({ isbn: '9780306406157', asin: 'B000FC1PJI' });
  });

  it('reads the cover record at first image + EXTH 201', async () => {
    const { cover } = await extractMobi(file);
    expect(cover?.mime).toBe('image/jpeg');
    expect(await dimensions(cover?.data)).toEqual(['jpeg', 320, 480]);
  });

  it('skips the cover when asked', async () => {
    const result = await extractMobi(file, { skipCover: true });
    expect(result.cover).toBeUndefined();
    expect(result.metadata.title).toBe('The Left Hand of Darkness');
  });
});

describe('extractMobi — fallbacks and variants', () => {
  it('falls back to the full name, then the database name, and the locale for language', async () => {
    const withFullName = tmp.file('fullname.mobi');
    writeMobi(withFullName, { databaseName: 'db_name', fullName: 'Der Process', locale: 0x0407, exth: [[100, 'Franz Kafka']] });
    const a = await extractMobi(withFullName);
    expect([a.metadata.title, a.metadata.language, a.metadata.authors]).toEqual(['Der Process', 'de', ['Franz Kafka']]);

    const bare = tmp.file('bare.mobi');
    writeMobi(bare, { databaseName: 'Only the PDB name' });
    const b = await extractMobi(bare);
    expect(b.metadata.title).toBe('Only the PDB name');
    expect(b.metadata.authors).toEqual([]);
    expect(b.metadata.language).toBeUndefined();
    expect(b.cover).toBeUndefined();
  });

  it('decodes windows-1252 text', async () => {
    const file = tmp.file('cp1252.mobi');
    writeMobi(file, { encoding: 1252, fullName: 'Café Crème', exth: [[100, 'Zoë Müller']] });
    const { metadata } = await extractMobi(file);
    expect(metadata.title).toBe('Café Crème');
    expect(metadata.authors).toEqual(['Zoë Müller']);
  });

  it('reads an AZW3 (KF8) book, its fixed-layout flag and thumbnail-only cover', async () => {
    const file = tmp.file('comic.azw3');
    writeMobi(file, {
      version: 8,
      fullName: 'Fixed Layout Comic',
      exth: [[100, 'Artist'], [122, 'true'], [202, 1]],
      images: [await jpeg(10, 10), await png(150, 200)],
    });
    const { bookType, fixedLayout, metadata, cover } = await extractMobi(file);
    expect(bookType).toBe('AZW3');
    expect(fixedLayout).toBe(true);
    expect(metadata.title).toBe('Fixed Layout Comic');
    expect(await dimensions(cover?.data)).toEqual(['png', 150, 200]);
  });

  it('treats .azw as AZW3', async () => {
    const file = tmp.file('old.azw');
    writeMobi(file, { fullName: 'Old Kindle' });
    expect((await extractMobi(file)).bookType).toBe('AZW3');
  });

  it('still reads metadata and cover from a DRM-encrypted book', async () => {
    const file = tmp.file('drm.mobi');
    writeMobi(file, { encryption: 2, fullName: 'Locked', exth: [[100, 'Someone'], [201, 0]], images: [await jpeg(33, 44)] });
    const { metadata, cover } = await extractMobi(file);
    expect(metadata.title).toBe('Locked');
    expect(await dimensions(cover?.data)).toEqual(['jpeg', 33, 44]);
  });

  it('uses the first image when no cover offset is given, and no cover when it is not an image', async () => {
    const first = tmp.file('first-image.mobi');
    writeMobi(first, { fullName: 'First', images: [await jpeg(21, 31)] });
    expect(await dimensions((await extractMobi(first)).cover?.data)).toEqual(['jpeg', 21, 31]);

    const junk = tmp.file('junk-image.mobi');
    writeMobi(junk, { fullName: 'Junk', exth: [[201, 0]], images: [Buffer.from('FLIS not an image at all')] });
    const result = await extractMobi(junk);
    expect(result.metadata.title).toBe('Junk');
    expect(result.cover).toBeUndefined();
  });

  it('ignores a cover offset pointing past the last record', async () => {
    const file = tmp.file('far-cover.mobi');
    writeMobi(file, { fullName: 'Far', exth: [[201, 500]], images: [await png(12, 12)] });
    const { cover } = await extractMobi(file);
    expect(await dimensions(cover?.data)).toEqual(['png', 12, 12]);
  });
});

describe('extractMobi — hostile input', () => {
  const spec: MobiSpec = { fullName: 'Hostile', exth: [[100, 'Nobody']], text: 'x'.repeat(5000) };

  it('rejects a zero-byte file as EMPTY', async () => {
    const file = tmp.file('zero.mobi');
    fs.writeFileSync(file, '');
    await expectFormatError(extractMobi(file), 'EMPTY');
  });

  it('rejects a missing file as IO', async () => {
    await expectFormatError(extractMobi(tmp.file('nope.mobi')), 'IO');
  });

  it('rejects a record offset past the end of the file as CORRUPT', async () => {
    const bytes = mobiBook(spec);
    bytes.writeUInt32BE(bytes.length + 10_000, PALM_HEADER_BYTES + 2 * RECORD_ENTRY_BYTES);
    const file = tmp.file('lying-offset.mobi');
    fs.writeFileSync(file, bytes);
    const error = await expectFormatError(extractMobi(file), 'CORRUPT');
    expect(error.message).toMatch(/record 2 offset/);
  });

  it('rejects a record count the file cannot hold as CORRUPT', async () => {
    const bytes = mobiBook(spec);
    bytes.writeUInt16BE(65535, 76);
    const file = tmp.file('lying-count.mobi');
    fs.writeFileSync(file, bytes);
    await expectFormatError(extractMobi(file), 'CORRUPT');
  });

  it('rejects a book cut in half as CORRUPT', async () => {
    const bytes = mobiBook(spec);
    const file = tmp.file('half.mobi');
    fs.writeFileSync(file, bytes.subarray(0, Math.floor(bytes.length / 2)));
    await expectFormatError(extractMobi(file), 'CORRUPT');
  });

  it('rejects a file shorter than a Palm header, and garbage bytes, as CORRUPT', async () => {
    const short = tmp.file('short.mobi');
    fs.writeFileSync(short, Buffer.alloc(40, 1));
    await expectFormatError(extractMobi(short), 'CORRUPT');
    const garbage = tmp.file('garbage.azw3');
    fs.writeFileSync(garbage, Buffer.from(Array.from({ length: 4000 }, (_, i) => (i * 131) % 256)));
    await expectFormatError(extractMobi(garbage), 'CORRUPT');
  });

  it('rejects an EXTH record whose length runs past its block as CORRUPT', async () => {
    const bytes = mobiBook({ fullName: 'Bad EXTH', exth: [[100, 'Author'], [101, 'Publisher']] });
    const exthAt = bytes.indexOf('EXTH');
    bytes.writeUInt32BE(0x7fffffff, exthAt + 12 + 4);
    const file = tmp.file('bad-exth.mobi');
    fs.writeFileSync(file, bytes);
    await expectFormatError(extractMobi(file), 'CORRUPT');
  });

  it('rejects a full name pointing outside record 0 as CORRUPT', async () => {
    const bytes = mobiBook({ fullName: 'Wandering Name' });
    const recordZeroAt = bytes.readUInt32BE(PALM_HEADER_BYTES);
    bytes.writeUInt32BE(1_000_000, recordZeroAt + 84);
    const file = tmp.file('bad-name.mobi');
    fs.writeFileSync(file, bytes);
    await expectFormatError(extractMobi(file), 'CORRUPT');
  });
});

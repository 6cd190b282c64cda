import { expectFormatError } from '../helpers/format-assertions.ts';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ComicArchive, detectArchiveType, isUnsafeEntryName, withComicArchive } from '../../src/core/formats/comic-archive.ts';
import type { ArchiveBackend, RawArchiveEntry } from '../../src/core/formats/comic-archive.ts';
import { openSevenZipBackend, parseSevenZipListing } from '../../src/core/formats/comic-7z.ts';
import { decodeXml, parseAgeRating, parseComicInfo } from '../../src/core/formats/comic-info.ts';
import { findComicInfo, orderPages } from '../../src/core/formats/comic-pages.ts';
import { openRarBackend } from '../../src/core/formats/comic-rar.ts';
import { extractComic } from '../../src/core/formats/comic.ts';
import { FormatError } from '../../src/core/formats/errors.ts';
import { LIMITS } from '../../src/core/formats/limits.ts';
import {
  comicInfoXml,
  jpeg,
  makeTempDir,
  patchName,
  pngDeclaring,
  writeCb7,
  writeCbr,
  writeZip,
  zipBuffer,
} from '../helpers/comic-fixtures.ts';
import type { FixtureEntry, TempDir } from '../helpers/comic-fixtures.ts';

let tmp: TempDir;
let page1: Buffer;
let page2: Buffer;
let page10: Buffer;

const FULL_INFO = {
  Title: 'The Gathering Storm',
  Series: 'Saga of the Nine',
  Number: '7.5',
  Count: 12,
  Volume: 2,
  AlternateSeries: 'Nine Crossover',
  AlternateNumber: '3b',
  Summary: 'Storm clouds & <trouble> gather.',
  Notes: 'Tagged by hand',
  Year: 2019,
  Month: 4,
  Day: 17,
  Writer: 'Ann Writer, Bob Scribe',
  Penciller: 'Cat Pencil',
  Inker: 'Dan Ink, Eve Ink',
  Colorist: 'Fay Colour',
  Letterer: 'Gus Letter',
  CoverArtist: 'Hal Cover',
  Editor: 'Ida Edit',
  Publisher: 'Ninefold Press',
  Imprint: 'Ninefold Black',
  Genre: 'Fantasy, Adventure',
  Tags: 'dragons, storms',
  Web: 'https://example.org/saga/7 https://example.org/mirror/7',
  PageCount: 99,
  LanguageISO: 'en',
  Format: 'Limited Series',
  BlackAndWhite: 'No',
  Manga: 'YesAndRightToLeft',
  Characters: 'Ria, Tomas',
  Teams: 'The Nine',
  Locations: 'Stormhold',
  StoryArc: 'Eye of the Storm',
  StoryArcNumber: 3,
  GTIN: '978-0-306-40615-7',
  AgeRating: 'Teen',
  CommunityRating: 4.5,
};

/** The page layout every container test uses: natural order matters, and junk must be ignored. */
function standardEntries(extra: FixtureEntry[] = []): FixtureEntry[] {
  return [
    { name: 'page10.jpg', data: page10 },
    { name: 'page2.jpg', data: page2 },
    { name: 'page1.jpg', data: page1 },
    { name: '__MACOSX/._page1.jpg', data: 'resource fork' },
    { name: '.hidden.jpg', data: 'not a page' },
    { name: 'readme.txt', data: 'scanned by nobody' },
    ...extra,
  ];
}

beforeAll(async () => {
  tmp = makeTempDir();
  [page1, page2, page10] = await Promise.all([jpeg('#c33'), jpeg('#3c3'), jpeg('#33c')]);
});

afterAll(() => tmp.remove());

describe('CBZ', () => {
  it('reads pages in natural order, ComicInfo metadata and the first page as cover', async () => {
    const path = await writeZip(tmp.file('full.cbz'), standardEntries([{ name: 'ComicInfo.xml', data: comicInfoXml(FULL_INFO) }]));
    const result = await extractComic(path);

    expect(result.bookType).toBe('CBX');
    expect(result.archiveType).toBe('ZIP');
    expect(result.pages).toEqual(['page1.jpg', 'page2.jpg', 'page10.jpg']);
    expect(result.cover?.data.equals(page1)).toBe(true);
    expect(result.cover?.mime).toBe('image/jpeg');
    expect(result.metadata).toEqual({
      title: 'The Gathering Storm',
      authors: ['Ann Writer', 'Bob Scribe'],
      publisher: 'Ninefold Press',
      publishedDate: '2019-04-17',
      description: 'Storm clouds & <trouble> gather.',
      language: 'en',
      isbn13: '9780306406157',
      identifiers: { gtin: '978-0-306-40615-7', isbn: '9780306406157' },
      seriesName: 'Saga of the Nine',
      seriesNumber: 7.5,
      seriesTotal: 12,
      categories: ['Fantasy', 'Adventure'],
      tags: ['dragons', 'storms'],
      pageCount: 3,
      rating: 4.5,
      ageRating: 13,
    });
    expect(result.comic).toEqual({
      issueNumber: '7.5',
      volumeNumber: 2,
      storyArc: 'Eye of the Storm',
      storyArcNumber: 3,
      alternateSeries: 'Nine Crossover',
      alternateIssue: '3b',
      writers: ['Ann Writer', 'Bob Scribe'],
      pencillers: ['Cat Pencil'],
      inkers: ['Dan Ink', 'Eve Ink'],
      colorists: ['Fay Colour'],
      letterers: ['Gus Letter'],
      coverArtists: ['Hal Cover'],
      editors: ['Ida Edit'],
      imprint: 'Ninefold Black',
      format: 'Limited Series',
      blackAndWhite: false,
      manga: true,
      readingDirection: 'rtl',
      characters: ['Ria', 'Tomas'],
      teams: ['The Nine'],
      locations: ['Stormhold'],
      webLink: 'https://example.org/saga/7',
      notes: 'Tagged by hand',
    });
  });

  it('falls back to the file name for the title when there is no ComicInfo.xml', async () => {
    const path = await writeZip(tmp.file('Saga 001 (2012).cbz'), standardEntries());
    const result = await extractComic(path);
    expect(result.metadata.title).toBe('Saga 001 (2012)');
    expect(result.metadata.authors).toEqual([]);
    expect(result.metadata.pageCount).toBe(3);
    expect(result.comic?.writers).toEqual([]);
    expect(result.pages).toEqual(['page1.jpg', 'page2.jpg', 'page10.jpg']);
  });

  it('keeps the title absent-from-ComicInfo case on the file name while series carries the rest', async () => {
    const path = await writeZip(
      tmp.file('issue-3.cbz'),
      standardEntries([{ name: 'ComicInfo.xml', data: comicInfoXml({ Series: 'Lone Series', Number: '3' }) }]),
    );
    const result = await extractComic(path);
    expect(result.metadata.title).toBe('issue-3');
    expect(result.metadata.seriesName).toBe('Lone Series');
    expect(result.metadata.seriesNumber).toBe(3);
  });

  it('skips the cover read when asked', async () => {
    const path = await writeZip(tmp.file('nocover.cbz'), standardEntries());
    const result = await extractComic(path, { skipCover: true });
    expect(result.cover).toBeUndefined();
    expect(result.pages).toHaveLength(3);
  });

  it('uses the page marked FrontCover in ComicInfo', async () => {
    const xml = comicInfoXml({ Title: 'Back to front' }, '<Pages><Page Image="0"/><Page Image="1" Type="FrontCover"/></Pages>');
    const path = await writeZip(tmp.file('frontcover.cbz'), standardEntries([{ name: 'ComicInfo.xml', data: xml }]));
    const result = await extractComic(path);
    expect(result.cover?.data.equals(page2)).toBe(true);
  });

  it('finds a lower-case comicinfo.xml in a subfolder and sorts pages by full path', async () => {
    const path = await writeZip(tmp.file('nested.cbz'), [
      { name: 'Issue 1/chapter 10/01.jpg', data: page10 },
      { name: 'Issue 1/chapter 2/01.jpg', data: page2 },
      { name: 'Issue 1/chapter 2/02.PNG', data: page1 },
      { name: 'Issue 1/comicinfo.xml', data: comicInfoXml({ Title: 'Nested' }) },
    ]);
    const result = await extractComic(path);
    expect(result.metadata.title).toBe('Nested');
    expect(result.pages).toEqual(['Issue 1/chapter 2/01.jpg', 'Issue 1/chapter 2/02.PNG', 'Issue 1/chapter 10/01.jpg']);
    expect(result.cover?.data.equals(page2)).toBe(true);
  });

  it('reads a deflated CBZ', async () => {
    const path = await writeZip(tmp.file('deflated.cbz'), standardEntries().map((e) => ({ ...e, compress: true })));
    const result = await extractComic(path);
    expect(result.cover?.data.equals(page1)).toBe(true);
  });
});

describe('CBR', () => {
  for (const version of [4, 5] as const) {
    it(`reads a RAR ${version} archive: pages, ComicInfo, cover`, async () => {
      const path = writeCbr(tmp.file(`full-rar${version}.cbr`), version, [
        { name: 'pages', data: '', directory: true },
        ...standardEntries([{ name: 'ComicInfo.xml', data: comicInfoXml(FULL_INFO) }]).map((e) => ({
          ...e,
          name: e.name.startsWith('page') ? `pages/${e.name}` : e.name,
        })),
        { name: 'pages/página 11.webp', data: 'webp bytes' },
      ]);
      const result = await extractComic(path);
      expect(result.archiveType).toBe('RAR');
      expect(result.pages).toEqual(['pages/page1.jpg', 'pages/page2.jpg', 'pages/page10.jpg', 'pages/página 11.webp']);
      expect(result.metadata.pageCount).toBe(4);
      expect(result.metadata.title).toBe('The Gathering Storm');
      expect(result.metadata.seriesNumber).toBe(7.5);
      expect(result.comic?.inkers).toEqual(['Dan Ink', 'Eve Ink']);
      expect(result.cover?.data.equals(page1)).toBe(true);
    });

    it(`refuses a RAR ${version} entry named ../evil.jpg as UNSAFE`, async () => {
      const path = writeCbr(tmp.file(`evil-rar${version}.cbr`), version, [
        { name: 'page1.jpg', data: page1 },
        { name: '../evil.jpg', data: page2 },
      ]);
      await expectFormatError(extractComic(path), 'UNSAFE', /\.\.\/evil\.jpg/);
      expect(readdirSync(tmp.dir)).not.toContain('evil.jpg');
    });

    it(`refuses an absolute RAR ${version} entry name as UNSAFE`, async () => {
      const path = writeCbr(tmp.file(`abs-rar${version}.cbr`), version, [{ name: '/etc/cron.d/page.jpg', data: page1 }]);
      await expectFormatError(extractComic(path), 'UNSAFE');
    });

    it(`refuses a RAR ${version} header declaring far more than it stores (TOO_LARGE)`, async () => {
      const path = writeCbr(tmp.file(`bomb-rar${version}.cbr`), version, [
        { name: 'page1.jpg', data: page1 },
        { name: 'page2.jpg', data: 'tiny', declaredSize: 2_000_000_000 },
      ]);
      await expectFormatError(extractComic(path), 'TOO_LARGE', /page2\.jpg/);
    });

    it(`reports a RAR ${version} truncated mid-header or mid-page as CORRUPT`, async () => {
      const full = readFileSync(writeCbr(tmp.file(`whole-rar${version}.cbr`), version, standardEntries()));
      const lastPage = full.lastIndexOf(page1);
      for (const cut of [12, 40, lastPage + 100, full.length - 3]) {
        const path = tmp.file(`truncated-rar${version}-${cut}.cbr`);
        writeFileSync(path, full.subarray(0, cut));
        await expectFormatError(extractComic(path), 'CORRUPT');
      }
    });

    it(`reports damaged page data in RAR ${version} as CORRUPT`, async () => {
      const full = writeCbr(tmp.file(`crc-rar${version}.cbr`), version, [{ name: 'page1.jpg', data: page1 }]);
      const bytes = readFileSync(full);
      const at = bytes.indexOf(page1.subarray(0, 16));
      bytes[at + 10] = (bytes[at + 10] ?? 0) ^ 0xff;
      writeFileSync(full, bytes);
      await expectFormatError(extractComic(full), 'CORRUPT', /damaged/);
    });
  }

  it('refuses a RAR 5 entry with backslash traversal', async () => {
    const path = writeCbr(tmp.file('backslash.cbr'), 5, [{ name: '..\\evil.jpg', data: page1 }]);
    await expectFormatError(extractComic(path), 'UNSAFE');
  });

  it('caps the bytes extracted from a RAR entry even if the header was not checked first', async () => {
    const path = writeCbr(tmp.file('cap.cbr'), 5, [{ name: 'page1.jpg', data: page1 }]);
    const backend = await openRarBackend(path);
    try {
      const [entry] = await backend.list();
      expect(entry?.name).toBe('page1.jpg');
      await expectFormatError(backend.read(entry as RawArchiveEntry, 10), 'TOO_LARGE');
      expect((await backend.read(entry as RawArchiveEntry, page1.length)).equals(page1)).toBe(true);
    } finally {
      await backend.close();
    }
  });

  it('keeps concurrent RAR extractions apart', async () => {
    const a = writeCbr(tmp.file('concurrent-a.cbr'), 4, [{ name: 'a.jpg', data: page1 }]);
    const b = writeCbr(tmp.file('concurrent-b.cbr'), 5, [{ name: 'b.jpg', data: page2 }]);
    const results = await Promise.all([a, b, a, b].map((p) => extractComic(p)));
    expect(results.map((r) => r.pages?.[0])).toEqual(['a.jpg', 'b.jpg', 'a.jpg', 'b.jpg']);
    expect(results[0]?.cover?.data.equals(page1)).toBe(true);
    expect(results[1]?.cover?.data.equals(page2)).toBe(true);
  });

  it('leaves the process-wide error handlers as they were after loading unrar', async () => {
    await extractComic(writeCbr(tmp.file('handlers.cbr'), 5, [{ name: 'a.jpg', data: page1 }]));
    const glue = [...process.listeners('uncaughtException'), ...process.listeners('unhandledRejection')].filter((l) =>
      /ExitStatus|throw reason/.test(String(l)),
    );
    expect(glue).toEqual([]);
  });

  it('reads a .cbr that is really a zip', async () => {
    const path = await writeZip(tmp.file('actually-zip.cbr'), standardEntries());
    const result = await extractComic(path);
    expect(result.archiveType).toBe('ZIP');
    expect(result.pages).toEqual(['page1.jpg', 'page2.jpg', 'page10.jpg']);
  });

  it('reads a .cbz that is really a RAR', async () => {
    const path = writeCbr(tmp.file('actually-rar.cbz'), 4, standardEntries());
    const result = await extractComic(path);
    expect(result.archiveType).toBe('RAR');
    expect(result.cover?.data.equals(page1)).toBe(true);
  });
});

describe('CB7', () => {
  it('reads a solid 7z archive: pages, ComicInfo, cover', async () => {
    const path = await writeCb7(
      tmp.file('full.cb7'),
      standardEntries([
        { name: 'ComicInfo.xml', data: comicInfoXml(FULL_INFO) },
        { name: 'extras/ümlaut 20.png', data: page10 },
      ]),
    );
    const result = await extractComic(path);
    expect(result.archiveType).toBe('SEVEN_ZIP');
    expect(result.pages).toEqual(['extras/ümlaut 20.png', 'page1.jpg', 'page2.jpg', 'page10.jpg']);
    expect(result.metadata.title).toBe('The Gathering Storm');
    expect(result.metadata.ageRating).toBe(13);
    expect(result.comic?.readingDirection).toBe('rtl');
    expect(result.cover?.data.equals(page10)).toBe(true);
    expect(result.cover?.mime).toBe('image/png');
  });

  it('reads a non-solid 7z archive and a name with wildcard characters literally', async () => {
    const path = await writeCb7(
      tmp.file('nonsolid.cb7'),
      [
        { name: 'a*b.jpg', data: page1 },
        { name: 'axb.jpg', data: page2 },
      ],
      { solid: false },
    );
    const result = await extractComic(path);
    expect(result.pages).toEqual(['a*b.jpg', 'axb.jpg']);
    expect(result.cover?.data.equals(page1)).toBe(true);
  });

  it('refuses a 7z entry named ../evil.jpg as UNSAFE', async () => {
    const path = await writeCb7(tmp.file('evil.cb7'), [{ name: '../evil.jpg', data: page1 }], { fullPaths: true });
    await expectFormatError(extractComic(path), 'UNSAFE', /\.\.\/evil\.jpg/);
  });

  it('reports an encrypted 7z as UNSUPPORTED, with or without encrypted headers', async () => {
    const files = await writeCb7(tmp.file('enc-files.cb7'), [{ name: 'page1.jpg', data: page1 }], { password: 's3cret' });
    await expectFormatError(extractComic(files), 'UNSUPPORTED', /encrypted/);
    const headers = await writeCb7(tmp.file('enc-headers.cb7'), [{ name: 'page1.jpg', data: page1 }], {
      password: 's3cret',
      encryptHeaders: true,
    });
    await expectFormatError(extractComic(headers), 'UNSUPPORTED', /encrypted/);
  });

  it('reports a truncated 7z as CORRUPT', async () => {
    const full = await writeCb7(tmp.file('whole.cb7'), standardEntries());
    const path = tmp.file('truncated.cb7');
    writeFileSync(path, readFileSync(full).subarray(0, 64));
    await expectFormatError(extractComic(path), 'CORRUPT');
  });

  it('kills the extraction once an entry passes the byte cap', async () => {
    const path = await writeCb7(tmp.file('cap.cb7'), [{ name: 'page1.jpg', data: Buffer.alloc(1_000_000, 7) }]);
    const backend = await openSevenZipBackend(path);
    const [entry] = await backend.list();
    expect(entry).toMatchObject({ name: 'page1.jpg', size: 1_000_000 });
    await expectFormatError(backend.read(entry as RawArchiveEntry, 1000), 'TOO_LARGE');
    expect((await backend.read(entry as RawArchiveEntry, 1_000_000)).length).toBe(1_000_000);
  });

  it('reports a missing 7-Zip binary as UNSUPPORTED', async () => {
    const path = await writeCb7(tmp.file('nobinary.cb7'), [{ name: 'page1.jpg', data: page1 }]);
    const saved = process.env.BINDERY_7Z;
    process.env.BINDERY_7Z = tmp.file('no-such-7z');
    try {
      await expectFormatError(extractComic(path), 'UNSUPPORTED', /7-Zip/);
    } finally {
      if (saved === undefined) delete process.env.BINDERY_7Z;
      else process.env.BINDERY_7Z = saved;
    }
  });
});

describe('hostile and broken comics', () => {
  it('zero-byte file → EMPTY', async () => {
    const path = tmp.file('zero.cbz');
    writeFileSync(path, Buffer.alloc(0));
    await expectFormatError(extractComic(path), 'EMPTY');
  });

  it('missing file → IO', async () => {
    await expectFormatError(extractComic(tmp.file('does-not-exist.cbz')), 'IO');
  });

  it('truncated zip → CORRUPT', async () => {
    const whole = await zipBuffer(standardEntries());
    const path = tmp.file('truncated.cbz');
    writeFileSync(path, whole.subarray(0, Math.floor(whole.length / 2)));
    await expectFormatError(extractComic(path), 'CORRUPT');
  });

  it('garbage with a .cbr extension → CORRUPT naming the problem', async () => {
    const path = tmp.file('garbage.cbr');
    writeFileSync(path, Buffer.from('this is not an archive at all, just text'));
    await expectFormatError(extractComic(path), 'CORRUPT', /not a ZIP, RAR or 7z archive/);
  });

  it('zip entry ../evil.jpg → UNSAFE', async () => {
    const zip = await zipBuffer([
      { name: 'page1.jpg', data: page1 },
      { name: 'xx/evil.jpg', data: page2 },
    ]);
    const path = tmp.file('evil.cbz');
    writeFileSync(path, patchName(zip, 'xx/evil.jpg', '../evil.jpg'));
    await expectFormatError(extractComic(path), 'UNSAFE');
  });

  it('zip bomb → TOO_LARGE', async () => {
    const path = await writeZip(tmp.file('bomb.cbz'), [
      { name: 'page1.jpg', data: page1 },
      { name: 'page2.jpg', data: Buffer.alloc(32 * 1024 * 1024), compress: true },
    ]);
    await expectFormatError(extractComic(path), 'TOO_LARGE', /page2\.jpg/);
  });

  it('ComicInfo.xml declaring an entity → UNSAFE', async () => {
    const xml =
      '<?xml version="1.0"?>\n<!DOCTYPE ComicInfo [<!ENTITY lol "lololololol">]>\n<ComicInfo><Title>&lol;</Title></ComicInfo>';
    const path = await writeZip(tmp.file('entity.cbz'), standardEntries([{ name: 'ComicInfo.xml', data: xml }]));
    await expectFormatError(extractComic(path), 'UNSAFE', /entit/);
  });

  it('malformed ComicInfo.xml costs only the metadata', async () => {
    const xml = '<ComicInfo><Title>Tom & Jerry</Title><Series>Broken</ComicInfo>';
    const path = await writeZip(tmp.file('Broken Sidecar.cbz'), standardEntries([{ name: 'ComicInfo.xml', data: xml }]));
    const result = await extractComic(path);
    expect(result.metadata.title).toBe('Broken Sidecar');
    expect(result.metadata.seriesName).toBeUndefined();
    expect(result.pages).toEqual(['page1.jpg', 'page2.jpg', 'page10.jpg']);
  });

  it('archive without images → EMPTY', async () => {
    const path = await writeZip(tmp.file('noimages.cbz'), [
      { name: 'ComicInfo.xml', data: comicInfoXml({ Title: 'Nothing to see' }) },
      { name: 'notes.txt', data: 'no pages here' },
      { name: '__MACOSX/._page1.jpg', data: 'fork' },
    ]);
    await expectFormatError(extractComic(path), 'EMPTY', /no page images/);
  });

  it('empty zip (end-of-central-directory only) → EMPTY', async () => {
    const path = await writeZip(tmp.file('emptyzip.cbz'), []);
    await expectFormatError(extractComic(path), 'EMPTY');
  });

  it('returns an enormous declared image as bytes without decoding it', async () => {
    const huge = await pngDeclaring(20_000, 20_000);
    const path = await writeZip(tmp.file('hugeimage.cbz'), [
      { name: '000.png', data: huge },
      { name: '001.jpg', data: page1 },
    ]);
    const result = await extractComic(path);
    expect(result.cover?.data.equals(huge)).toBe(true);
    expect(result.cover?.mime).toBe('image/png');
    expect(result.cover?.data.readUInt32BE(16)).toBe(20_000);
  });
});

describe('shared archive rules', () => {
  function fakeBackend(entries: RawArchiveEntry[], payload = Buffer.from('bytes')): ArchiveBackend & { reads: number } {
    const backend = {
      reads: 0,
      list: async () => entries,
      read: async () => {
        backend.reads += 1;
        return payload;
      },
      close: async () => undefined,
    };
    return backend;
  }
  const file = (name: string, size = 5, compressedSize = 5): RawArchiveEntry => ({ name, size, compressedSize, isDirectory: false });

  it('recognises unsafe names from every platform', () => {
    for (const name of ['../a.jpg', 'a/../../b.jpg', '/abs.jpg', 'C:\\x.jpg', 'c:/x.jpg', '..\\x.jpg', 'a\0b.jpg']) {
      expect(isUnsafeEntryName(name), name).toBe(true);
    }
    for (const name of ['a.jpg', 'dir/a..b.jpg', '...jpg', 'x/..hidden/y.jpg', './a.jpg']) {
      expect(isUnsafeEntryName(name), name).toBe(false);
    }
  });

  it('refuses too many entries', async () => {
    const many = Array.from({ length: LIMITS.maxEntries + 1 }, (_, i) => file(`p${i}.jpg`));
    await expectFormatError(new ComicArchive('RAR', fakeBackend(many)).list(), 'TOO_LARGE', /entries/);
  });

  it('refuses a drive-letter name and a bomb-like ratio', async () => {
    await expectFormatError(new ComicArchive('SEVEN_ZIP', fakeBackend([file('D:/x.jpg')])).list(), 'UNSAFE');
    await expectFormatError(new ComicArchive('SEVEN_ZIP', fakeBackend([file('x.jpg', 500_000_000, 1000)])).list(), 'TOO_LARGE');
  });

  it('checks declared size and encryption before asking the backend to read', async () => {
    const backend = fakeBackend([file('big.jpg', 2000, 2000), { ...file('locked.jpg'), encrypted: true }, file('dir', 0, 0)]);
    const archive = new ComicArchive('RAR', backend);
    await expectFormatError(archive.read('big.jpg', 1000), 'TOO_LARGE');
    await expectFormatError(archive.read('locked.jpg'), 'UNSUPPORTED');
    await expectFormatError(archive.read('missing.jpg'), 'CORRUPT', /not found/);
    expect(backend.reads).toBe(0);
    expect((await archive.read('big.jpg', 5000)).toString()).toBe('bytes');
  });

  it('detects the archive kind from magic bytes', async () => {
    const cases: [string, Buffer, string][] = [
      ['m.zip', Buffer.from('PK\x03\x04rest', 'latin1'), 'ZIP'],
      ['m-empty.zip', Buffer.from('PK\x05\x06rest', 'latin1'), 'ZIP'],
      ['m4.rar', Buffer.from('Rar!\x1a\x07\x00rest', 'latin1'), 'RAR'],
      ['m5.rar', Buffer.from('Rar!\x1a\x07\x01\x00rest', 'latin1'), 'RAR'],
      ['m.7z', Buffer.from([0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c, 0, 4]), 'SEVEN_ZIP'],
    ];
    for (const [name, bytes, type] of cases) {
      writeFileSync(tmp.file(name), bytes);
      expect(await detectArchiveType(tmp.file(name))).toBe(type);
    }
    writeFileSync(tmp.file('short.cbz'), Buffer.from('PK'));
    await expectFormatError(detectArchiveType(tmp.file('short.cbz')), 'CORRUPT');
  });

  it('always releases the archive', async () => {
    const path = await writeZip(tmp.file('release.cbz'), standardEntries());
    await expect(
      withComicArchive(path, async () => {
        throw new FormatError('CORRUPT', 'inside work');
      }),
    ).rejects.toThrow('inside work');
  });
});

describe('7z listing parser', () => {
  it('shares a solid block’s packed size across its files and spots folders and encryption', () => {
    const listing = [
      'Path = dir',
      'Size = 0',
      'Packed Size = 0',
      'Attributes = D_ drwxr-xr-x',
      'Encrypted = -',
      'Block = ',
      '',
      'Path = dir/a.jpg',
      'Size = 3000000',
      'Packed Size = 30000',
      'Attributes = A_ -rw-r--r--',
      'Encrypted = -',
      'Block = 0',
      '',
      'Path = dir/b.jpg',
      'Size = 1000000',
      'Packed Size = ',
      'Attributes = A_ -rw-r--r--',
      'Encrypted = +',
      'Block = 0',
      '',
    ].join('\n');
    expect(parseSevenZipListing(listing)).toEqual([
      { name: 'dir', size: 0, compressedSize: 0, isDirectory: true, encrypted: false },
      { name: 'dir/a.jpg', size: 3_000_000, compressedSize: 22_500, isDirectory: false, encrypted: false },
      { name: 'dir/b.jpg', size: 1_000_000, compressedSize: 7_500, isDirectory: false, encrypted: true },
    ]);
  });
});

describe('ComicInfo parsing', () => {
  it('maps age ratings to minimum ages', () => {
    expect(parseAgeRating('Adults Only 18+')).toBe(18);
    expect(parseAgeRating('X18+')).toBe(18);
    expect(parseAgeRating('Mature 17+')).toBe(17);
    expect(parseAgeRating('MA15+')).toBe(15);
    expect(parseAgeRating('Teen')).toBe(13);
    expect(parseAgeRating('Everyone 10+')).toBe(10);
    expect(parseAgeRating('PG')).toBe(10);
    expect(parseAgeRating('Everyone')).toBe(0);
    expect(parseAgeRating('G')).toBe(0);
    expect(parseAgeRating('16+')).toBe(16);
    expect(parseAgeRating('Unknown')).toBeUndefined();
    expect(parseAgeRating('Rating Pending')).toBeUndefined();
    expect(parseAgeRating(undefined)).toBeUndefined();
  });

  it('reads Manga Yes / No without inventing a reading direction', () => {
    expect(parseComicInfo(comicInfoXml({ Manga: 'Yes' })).comic).toMatchObject({ manga: true });
    expect(parseComicInfo(comicInfoXml({ Manga: 'Yes' })).comic.readingDirection).toBeUndefined();
    expect(parseComicInfo(comicInfoXml({ Manga: 'No' })).comic.manga).toBe(false);
    expect(parseComicInfo(comicInfoXml({ Manga: 'Unknown' })).comic.manga).toBeUndefined();
  });

  it('ignores ComicRack "not set" values and partial dates', () => {
    const info = parseComicInfo(comicInfoXml({ Count: -1, Volume: -1, Year: 2001, Month: -1, PageCount: 0, CommunityRating: 7 }));
    expect(info.metadata.seriesTotal).toBeUndefined();
    expect(info.comic.volumeNumber).toBeUndefined();
    expect(info.metadata.publishedDate).toBe('2001-01-01');
    expect(info.metadata.pageCount).toBeUndefined();
    expect(info.metadata.rating).toBeUndefined();
    expect(parseComicInfo(comicInfoXml({ Month: 5 })).metadata.publishedDate).toBeUndefined();
  });

  it('keeps a non-ISBN GTIN as an identifier only', () => {
    const info = parseComicInfo(comicInfoXml({ GTIN: '0761941337621' }));
    expect(info.metadata.identifiers).toEqual({ gtin: '0761941337621' });
    expect(info.metadata.isbn13).toBeUndefined();
  });

  it('matches element names regardless of case', () => {
    const info = parseComicInfo('<ComicInfo><title>lower</title><LanguageIso>fr</LanguageIso></ComicInfo>');
    expect(info.metadata.title).toBe('lower');
    expect(info.metadata.language).toBe('fr');
  });

  it('decodes UTF-16 documents by their byte order mark', () => {
    const xml = comicInfoXml({ Title: 'Élan' });
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(xml, 'utf16le')]);
    const be = Buffer.from(le);
    be.swap16();
    expect(parseComicInfo(decodeXml(le)).metadata.title).toBe('Élan');
    expect(parseComicInfo(decodeXml(be)).metadata.title).toBe('Élan');
  });

  it('refuses a document without a ComicInfo root as CORRUPT', () => {
    expect(() => parseComicInfo('<Other><Title>x</Title></Other>')).toThrow(FormatError);
  });
});

describe('page selection', () => {
  it('keeps only images, drops resource forks and hidden files, sorts naturally', () => {
    expect(
      orderPages(['p10.jpg', 'p9.JPEG', 'p1.webp', 'cover.avif', 'x.jxl', 'b.bmp', 'g.gif', '__MACOSX/p1.jpg', '.DS_Store', 'dir/.p.jpg', 'info.xml']),
    ).toEqual(['b.bmp', 'cover.avif', 'g.gif', 'p1.webp', 'p9.JPEG', 'p10.jpg', 'x.jxl']);
  });

  it('prefers the root ComicInfo.xml over a nested one', () => {
    expect(findComicInfo(['a/ComicInfo.xml', 'COMICINFO.XML', '__MACOSX/ComicInfo.xml'])).toBe('COMICINFO.XML');
    expect(findComicInfo(['b/c/ComicInfo.xml', 'a/comicinfo.xml'])).toBe('a/comicinfo.xml');
    expect(findComicInfo(['page1.jpg'])).toBeUndefined();
  });
});

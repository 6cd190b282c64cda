import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { buffer } from 'node:stream/consumers';
import yauzl from 'yauzl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractComic } from '../../src/core/formats/comic.ts';
import { rewriteComicInfo } from '../../src/core/metadata/write-back/cbz.ts';
import { writeMetadataToFile, type FileMetadata } from '../../src/core/metadata/write-back/index.ts';
import { comicInfoXml, jpeg, makeTempDir, patchName, writeZip, zipBuffer } from '../helpers/comic-fixtures.ts';

const tmp = makeTempDir('bindery-wb-cbz-');
afterAll(() => tmp.remove());

let pages: Buffer[];
beforeAll(async () => {
  pages = await Promise.all(['#c33', '#3c3', '#33c'].map((c) => jpeg(c, 40, 60)));
});

const meta = (overrides: Partial<FileMetadata> = {}): FileMetadata => ({
  title: 'The Sandman: Preludes & Nocturnes',
  authors: ['Neil Gaiman'],
  publisher: 'DC Comics',
  publishedDate: '1989-01-15',
  description: 'Sleep of the Just <and> other stories',
  language: 'en',
  isbn13: '9781401225759',
  seriesName: 'The Sandman',
  seriesNumber: 1,
  seriesTotal: 75,
  categories: ['Fantasy', 'Horror'],
  tags: ['vertigo'],
  ageRating: 17,
  comic: {
    issueNumber: '1',
    volumeNumber: 1,
    storyArc: 'Preludes & Nocturnes',
    storyArcNumber: 1,
    imprint: 'Vertigo',
    format: 'Series',
    blackAndWhite: false,
    manga: false,
    webLink: 'https://example.com/sandman',
    notes: 'Scanned from the first printing',
    pencillers: ['Sam Kieth'],
    inkers: ['Mike Dringenberg', 'Malcolm Jones III'],
    colorists: ['Robbie Busch'],
    letterers: ['Todd Klein'],
    coverArtists: ['Dave McKean'],
    editors: ['Karen Berger'],
    characters: ['Dream', 'Death'],
    teams: [],
    locations: ['The Dreaming'],
  },
  ...overrides,
});

/** Stored bytes of every entry (name → raw data), in archive order. */
function rawEntries(path: string): Promise<[string, Buffer][]> {
  return new Promise((resolve, reject) => {
    yauzl.open(path, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err ?? new Error('no zip'));
      const out: [string, Buffer, number][] = [];
      zip.on('error', reject);
      zip.on('end', () => resolve(out.sort((a, b) => a[2] - b[2]).map(([n, b]) => [n, b])));
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, { decompress: entry.compressionMethod === 8 ? false : null } as yauzl.ZipFileOptions, (e, s) => {
          if (e || !s) return reject(e ?? new Error('no stream'));
          buffer(s).then((b) => {
            out.push([entry.fileName, b, entry.relativeOffsetOfLocalHeader]);
            zip.readEntry();
          }, reject);
        });
      });
      zip.readEntry();
    });
  });
}

async function cbz(name: string, info?: string): Promise<string> {
  const entries = pages.map((data, i) => ({ name: `page${i + 1}.jpg`, data }));
  if (info !== undefined) entries.splice(1, 0, { name: 'ComicInfo.xml', data: Buffer.from(info), compress: true } as never);
  return writeZip(tmp.file(name), entries);
}

describe('CBZ write-back', () => {
  it('replaces ComicInfo.xml in place, keeps the elements it does not own, and copies the pages as stored', async () => {
    const file = await cbz('replace.cbz', comicInfoXml({ Title: 'Old', Series: 'Old series', Number: '9', PageCount: 3, CommunityRating: '4.5', ScanInformation: 'scanner x' }, '  <Pages><Page Image="0" Type="FrontCover"/></Pages>'));
    const before = await rawEntries(file);
    expect(await writeMetadataToFile(file, 'cbz', meta())).toEqual({ status: 'written' });
    const after = await rawEntries(file);
    expect(after.map(([n]) => n)).toEqual(before.map(([n]) => n));
    for (const [name, data] of after) if (name !== 'ComicInfo.xml') expect(data.equals(before.find(([n]) => n === name)?.[1] ?? Buffer.alloc(0)), name).toBe(true);

    const x = await extractComic(file, { skipCover: true });
    expect(x.metadata).toMatchObject({
      title: 'The Sandman: Preludes & Nocturnes',
      authors: ['Neil Gaiman'],
      publisher: 'DC Comics',
      publishedDate: '1989-01-15',
      description: 'Sleep of the Just <and> other stories',
      language: 'en',
      isbn13: '9781401225759',
      seriesName: 'The Sandman',
      seriesNumber: 1,
      seriesTotal: 75,
      categories: ['Fantasy', 'Horror'],
      tags: ['vertigo'],
      ageRating: 17,
      rating: 4.5,
    });
    expect(x.comic).toMatchObject({ storyArc: 'Preludes & Nocturnes', imprint: 'Vertigo', pencillers: ['Sam Kieth'], inkers: ['Mike Dringenberg', 'Malcolm Jones III'], characters: ['Dream', 'Death'], locations: ['The Dreaming'], manga: false, blackAndWhite: false });

    const xml = (await new Promise<string>((resolve, reject) => {
      yauzl.open(file, { lazyEntries: true }, (err, zip) => {
        if (err || !zip) return reject(err);
        zip.on('entry', (entry: yauzl.Entry) => {
          if (entry.fileName !== 'ComicInfo.xml') return zip.readEntry();
          zip.openReadStream(entry, (e, s) => (e || !s ? reject(e) : buffer(s).then((b) => resolve(b.toString('utf8')), reject)));
        });
        zip.readEntry();
      });
    }));
    expect(xml).toContain('<ScanInformation>scanner x</ScanInformation>');
    expect(xml).toContain('<Pages><Page Image="0" Type="FrontCover"/></Pages>');
    expect(xml).not.toContain('Old series');
    // Schema order: Title before Series before Summary before Writer, Pages before CommunityRating before GTIN.
    const order = ['<Title>', '<Series>', '<Number>', '<Summary>', '<Writer>', '<Publisher>', '<PageCount>', '<AgeRating>', '<Pages>', '<CommunityRating>', '<GTIN>'].map((t) => xml.indexOf(t));
    expect(order.every((v, i) => v > 0 && (i === 0 || v > (order[i - 1] as number)))).toBe(true);
  });

  it('adds ComicInfo.xml to a comic that has none, after the pages', async () => {
    const file = await cbz('add.cbz');
    await writeMetadataToFile(file, 'cbz', meta());
    const names = (await rawEntries(file)).map(([n]) => n);
    expect(names).toEqual(['page1.jpg', 'page2.jpg', 'page3.jpg', 'ComicInfo.xml']);
    const x = await extractComic(file, { skipCover: true });
    expect(x.metadata.title).toBe('The Sandman: Preludes & Nocturnes');
    expect(x.pages).toEqual(['page1.jpg', 'page2.jpg', 'page3.jpg']);
  });

  it('a second save with the same metadata is byte-identical (the file is not touched)', async () => {
    const file = await cbz('stable.cbz', comicInfoXml({ Title: 'Old' }));
    await writeMetadataToFile(file, 'cbz', meta());
    const first = readFileSync(file);
    const mtime = statSync(file).mtimeMs;
    expect(await writeMetadataToFile(file, 'cbz', meta())).toEqual({ status: 'unchanged' });
    expect(readFileSync(file).equals(first)).toBe(true);
    expect(statSync(file).mtimeMs).toBe(mtime);
    const once = rewriteComicInfo(comicInfoXml({ Title: 'x', Pages: '' }), meta());
    expect(rewriteComicInfo(once, meta())).toBe(once);
  });

  it('leaves the original untouched on failure and over the size limit', async () => {
    const file = await cbz('fail.cbz', comicInfoXml({ Title: 'Old' }));
    const original = readFileSync(file);
    await expect(writeMetadataToFile(file, 'cbz', meta(), { hooks: { beforeRename: () => { throw new Error('killed'); } } })).rejects.toThrow('killed');
    expect(readFileSync(file).equals(original)).toBe(true);
    await expect(writeMetadataToFile(file, 'cbz', meta(), { hooks: { afterTempWritten: (temp) => writeFileSync(temp, original.subarray(0, original.length - 30)) } })).rejects.toMatchObject({ code: 'VERIFY_FAILED' });
    expect(readFileSync(file).equals(original)).toBe(true);
    expect(await writeMetadataToFile(file, 'cbz', meta(), { maxFileBytes: 10 })).toMatchObject({ status: 'skipped' });
    expect(readFileSync(file).equals(original)).toBe(true);
    expect(readdirSync(tmp.dir).filter((n) => n.includes('.bindery-'))).toEqual([]);
  });

  it('refuses hostile archives and never follows their names', async () => {
    const placeholder = 'aaaaaaaaaaaa.jpg';
    const zip = await zipBuffer([...pages.map((data, i) => ({ name: `page${i + 1}.jpg`, data })), { name: placeholder, data: 'x' }]);
    const file = tmp.file('hostile.cbz');
    writeFileSync(file, patchName(zip, placeholder, '../../../x.jpg'.padEnd(placeholder.length, 'j').slice(0, placeholder.length)));
    const bytes = readFileSync(file);
    await expect(writeMetadataToFile(file, 'cbz', meta())).rejects.toMatchObject({ code: 'UNSUPPORTED' });
    expect(readFileSync(file).equals(bytes)).toBe(true);
  });
});

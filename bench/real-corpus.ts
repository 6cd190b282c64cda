// Builds a realistic mixed library for the scan benchmark, deterministic from a seed: 1,000 entries (by default) in an
// Author/Series/NN - Title/Title.ext layout, about 665 MB. The mix and the sizes follow issue 14:
//   33 % EPUB 2 and 37 % EPUB 3 (5-30 chapters, covers 600-1,200 px wide of 100-300 KB, JPEG q88 or PNG),
//   14 % PDF (8-120 pages; 70 % open with a full-page JPEG cover, 15 % are scans of 4-16 full-page JPEGs),
//   9 % CBZ and 3 % CBR (10-40 pages 1,056-1,600 px wide of 60-200 KB, with ComicInfo.xml),
//   2 % M4B (3-6 chapters, 1-2 minutes, embedded cover), 2 % MP3 folders (one track per chapter and cover.jpg),
//   and about 3 % of the entries broken, duplicated or oddly named.
// Images are photographic-looking (smooth colour fields with grain), so their JPEG sizes are those of real scans and
// covers. They come from a pool drawn once per corpus (a few hundred images, ~1 minute to make) that the books pick
// from: a scanner's cost does not depend on whether two books share a cover, and every book file is still unique.
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import sharp from 'sharp';
import yazl from 'yazl';
import { writeAudio } from '../test/helpers/audio-fixtures.ts';
import { writeRar } from '../test/helpers/rar-writer.ts';
import { comicInfoXml } from '../test/helpers/comic-fixtures.ts';
import { containerXml, opfDocument, xhtmlPage } from '../test/helpers/epub-fixtures.ts';

/** The benchmark's formats, one row each in its table. */
export const CORPUS_FORMATS = ['EPUB', 'PDF', 'scanned PDF', 'CBZ', 'CBR', 'M4B', 'MP3 folder'] as const;
export type CorpusFormat = (typeof CORPUS_FORMATS)[number];

export interface CorpusEntry {
  /** Path below the corpus root: a file, or the folder of an MP3 audiobook. */
  path: string;
  format: CorpusFormat;
  /** broken: a scanner must report it; duplicate: same bytes as another entry; odd-name: unusual characters. */
  oddity?: 'broken' | 'duplicate' | 'odd-name';
  bytes: number;
}

/** mulberry32: small, fast and the same everywhere. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rng = () => number;
const between = (rng: Rng, low: number, high: number): number => Math.floor(low + rng() * (high - low + 1));
const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)] as T;

// ---- images ----

/**
 * Raw RGB at half the target size: a smooth field interpolated from a coarse grid of random colours, plus grain of
 * amplitude `grain`. Upscaled 2x by libvips, the grain becomes the soft texture of a photograph or a printed page.
 */
function field(rng: Rng, width: number, height: number, grain: number, flat: boolean): Buffer {
  const gx = 5;
  const gy = 7;
  const grid = Float64Array.from({ length: gx * gy * 3 }, () => rng() * 255);
  const pixels = new Uint8ClampedArray(width * height * 3);
  let state = Math.floor(rng() * 2 ** 31) || 1;
  const row = new Float64Array(width * 3);
  for (let y = 0; y < height; y++) {
    const fy = (y / height) * (gy - 1);
    const y0 = Math.min(gy - 2, Math.floor(fy));
    const ty = fy - y0;
    for (let x = 0; x < width; x++) {
      const fx = (x / width) * (gx - 1);
      const x0 = Math.min(gx - 2, Math.floor(fx));
      const tx = fx - x0;
      const a = (y0 * gx + x0) * 3;
      const b = a + gx * 3;
      for (let c = 0; c < 3; c++) {
        const top = (grid[a + c] as number) * (1 - tx) + (grid[a + 3 + c] as number) * tx;
        const bottom = (grid[b + c] as number) * (1 - tx) + (grid[b + 3 + c] as number) * tx;
        row[x * 3 + c] = top * (1 - ty) + bottom * ty;
      }
    }
    const offset = y * width * 3;
    for (let i = 0; i < row.length; i++) {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      const value = (row[i] as number) + ((state & 1023) / 1024 - 0.5) * grain;
      pixels[offset + i] = flat ? Math.round(value / 24) * 24 : value;
    }
  }
  return Buffer.from(pixels.buffer);
}

/** A PNG cover is drawn at full size in flat bands (artwork, not a photograph), which is what keeps it small. */
async function encode(rng: Rng, width: number, height: number, grain: number, kind: 'jpeg' | 'png'): Promise<Buffer> {
  if (kind === 'png') return sharp(field(rng, width, height, grain, true), { raw: { width, height, channels: 3 } }).png({ compressionLevel: 6 }).toBuffer();
  const half = { width: Math.ceil(width / 2), height: Math.ceil(height / 2), channels: 3 as const };
  return sharp(field(rng, half.width, half.height, grain, false), { raw: half }).resize(width, height, { kernel: 'cubic' }).jpeg({ quality: 88 }).toBuffer();
}

/** An image of about `targetBytes`: one trial encode, then one with the grain scaled to land near the target. */
async function image(rng: Rng, width: number, height: number, targetBytes: number, kind: 'jpeg' | 'png' = 'jpeg'): Promise<Buffer> {
  const seed = Math.floor(rng() * 2 ** 31);
  const grain = kind === 'jpeg' ? 40 : 5;
  const first = await encode(random(seed), width, height, grain, kind);
  if (Math.abs(first.length - targetBytes) < targetBytes * 0.15) return first;
  const scaled = Math.min(250, Math.max(2, grain * (targetBytes / first.length) ** 1.6));
  return encode(random(seed), width, height, scaled, kind);
}

interface ImagePool {
  covers: Buffer[];
  pngCovers: Buffer[];
  pages: Buffer[];
  scans: Buffer[];
  squares: Buffer[];
}

/** Makes `count` items two at a time (both cores), in order. */
async function makeAll<T>(count: number, make: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array<T>(count);
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let i = next++; i < count; i = next++) out[i] = await make(i);
  };
  await Promise.all([lane(), lane()]);
  return out;
}

async function makePool(seed: number): Promise<ImagePool> {
  const rng = random(seed ^ 0x1ea5);
  const seeds = (n: number): number[] => Array.from({ length: n }, () => Math.floor(rng() * 2 ** 31));
  const cover = async (s: number, kind: 'jpeg' | 'png'): Promise<Buffer> => {
    const r = random(s);
    const width = between(r, 600, 1200);
    return image(r, width, Math.round(width * 1.5), between(r, 100, 300) * 1024, kind);
  };
  const [coverSeeds, pngSeeds, pageSeeds, scanSeeds, squareSeeds] = [seeds(120), seeds(24), seeds(200), seeds(60), seeds(16)];
  return {
    covers: await makeAll(coverSeeds.length, (i) => cover(coverSeeds[i] as number, 'jpeg')),
    pngCovers: await makeAll(pngSeeds.length, (i) => cover(pngSeeds[i] as number, 'png')),
    pages: await makeAll(pageSeeds.length, (i) => {
      const r = random(pageSeeds[i] as number);
      const width = between(r, 1056, 1600);
      return image(r, width, Math.round(width * 1.54), between(r, 60, 200) * 1024);
    }),
    scans: await makeAll(scanSeeds.length, (i) => {
      const r = random(scanSeeds[i] as number);
      const width = between(r, 1200, 1700);
      return image(r, width, Math.round(width * 1.414), between(r, 120, 350) * 1024);
    }),
    squares: await makeAll(squareSeeds.length, (i) => {
      const r = random(squareSeeds[i] as number);
      const side = between(r, 600, 1400);
      return image(r, side, side, between(r, 80, 250) * 1024);
    }),
  };
}

// ---- text ----

const WORDS = (
  'the of and to in a is that for it as was with be by on not he I this are or his from at which but have an they you ' +
  'were her she there one all we their been has when who will more no if out so said what up its about into than them ' +
  'can only other new some could time these two may then do first any my now such like our over man me even most made ' +
  'after also did many before must through back years where much your way well down should because each just those ' +
  'people how too little state good very make world still own see men work long get here between both life being under ' +
  'never day same another know while last might us great old year off come since against go came right used take three ' +
  'lantern harbour quiet river stone winter garden letter evening silver window mountain shadow morning voice memory'
).split(' ');

function sentence(rng: Rng): string {
  const words = Array.from({ length: between(rng, 6, 22) }, () => pick(rng, WORDS));
  const text = words.join(' ');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

function paragraphs(rng: Rng, bytes: number): string[] {
  const out: string[] = [];
  for (let size = 0; size < bytes; ) {
    const p = Array.from({ length: between(rng, 2, 7) }, () => sentence(rng)).join(' ');
    out.push(p);
    size += p.length + 8;
  }
  return out;
}

const FIRST = ['Anna', 'Ben', 'Clara', 'David', 'Elena', 'Farid', 'Grace', 'Hugo', 'Ines', 'Jonas', 'Kira', 'Luca', 'Maya', 'Nils', 'Olga', 'Pavel', 'Rosa', 'Sami', 'Tara', 'Umar', 'Vera', 'Wen', 'Yusuf', 'Zoe'];
const LAST = ['Abbott', 'Brandt', 'Castillo', 'Dunmore', 'Eriksen', 'Fontaine', 'Gallagher', 'Haddad', 'Ivanova', 'Jansen', 'Kowalski', 'Lindqvist', 'Moreau', 'Nakamura', 'Okafor', 'Petrov', 'Quinn', 'Rossi', 'Sato', 'Torres', 'Ueda', 'Varga', 'Whitfield', 'Yilmaz'];
const NOUNS = ['Harbour', 'Lantern', 'River', 'Garden', 'Winter', 'Letter', 'Mountain', 'Shadow', 'Mirror', 'Orchard', 'Tide', 'Archive', 'Compass', 'Ember', 'Meridian', 'Atlas'];
const ADJECTIVES = ['Quiet', 'Silver', 'Hidden', 'Last', 'Northern', 'Broken', 'Distant', 'Burning', 'Patient', 'Hollow', 'Golden', 'Secret'];

const title = (rng: Rng): string => (rng() < 0.5 ? `The ${pick(rng, ADJECTIVES)} ${pick(rng, NOUNS)}` : `${pick(rng, NOUNS)} of ${pick(rng, ADJECTIVES)} ${pick(rng, NOUNS)}s`);

// ---- containers ----

async function zip(entries: { name: string; data: Buffer | string; compress?: boolean }[]): Promise<Buffer> {
  const archive = new yazl.ZipFile();
  for (const e of entries) archive.addBuffer(typeof e.data === 'string' ? Buffer.from(e.data) : e.data, e.name, { compress: e.compress ?? true, mtime: new Date(Date.UTC(2024, 0, 1)) });
  archive.end();
  const chunks: Buffer[] = [];
  for await (const chunk of archive.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

interface BookInfo {
  title: string;
  author: string;
  series: string;
  index: number;
  id: string;
}

async function epub(rng: Rng, book: BookInfo, version: 2 | 3, cover: { data: Buffer; ext: 'jpg' | 'png' }): Promise<Buffer> {
  const chapters = between(rng, 5, 30);
  const mime = cover.ext === 'jpg' ? 'image/jpeg' : 'image/png';
  const files: { name: string; data: Buffer | string; compress?: boolean }[] = [];
  const manifest: string[] = [];
  const spine: string[] = [];
  for (let c = 1; c <= chapters; c++) {
    const body = `<h2>Chapter ${c}</h2>${paragraphs(rng, between(rng, 6, 28) * 1024)
      .map((p) => `<p>${p}</p>`)
      .join('\n')}`;
    files.push({ name: `OEBPS/text/chapter${c}.xhtml`, data: xhtmlPage(body, `Chapter ${c}`) });
    manifest.push(`<item id="ch${c}" href="text/chapter${c}.xhtml" media-type="application/xhtml+xml"/>`);
    spine.push(`<itemref idref="ch${c}"/>`);
  }
  files.push({ name: `OEBPS/images/cover.${cover.ext}`, data: cover.data, compress: false });
  files.push({ name: 'OEBPS/text/cover.xhtml', data: xhtmlPage(`<div><img src="../images/cover.${cover.ext}" alt="cover"/></div>`, 'Cover') });
  files.push({ name: 'OEBPS/styles.css', data: 'body { font-family: serif; margin: 5%; } h2 { text-align: center; }\n'.repeat(8) });
  const description = paragraphs(rng, 600).join(' ');
  const common = `<dc:identifier id="bookid">urn:uuid:${book.id}</dc:identifier>
    <dc:title>${book.title}</dc:title><dc:creator>${book.author}</dc:creator><dc:language>en</dc:language>
    <dc:publisher>${pick(rng, NOUNS)} Press</dc:publisher><dc:date>${between(rng, 1950, 2024)}-0${between(rng, 1, 9)}-1${between(rng, 0, 9)}</dc:date>
    <dc:subject>${pick(rng, NOUNS)}</dc:subject><dc:subject>${pick(rng, ADJECTIVES)} fiction</dc:subject>
    <dc:description>${description}</dc:description>
    <dc:identifier opf:scheme="ISBN">978${String(between(rng, 0, 9_999_999_999)).padStart(10, '0')}</dc:identifier>
    <meta name="calibre:series" content="${book.series}"/><meta name="calibre:series_index" content="${book.index}"/>`;
  const coverItem = `<item id="cover-image" href="images/cover.${cover.ext}" media-type="${mime}"${version === 3 ? ' properties="cover-image"' : ''}/>
    <item id="cover-page" href="text/cover.xhtml" media-type="application/xhtml+xml"/><item id="css" href="styles.css" media-type="text/css"/>`;
  if (version === 3) {
    const nav = xhtmlPage(`<nav epub:type="toc" xmlns:epub="http://www.idpf.org/2007/ops"><ol>${Array.from({ length: chapters }, (_, i) => `<li><a href="chapter${i + 1}.xhtml">Chapter ${i + 1}</a></li>`).join('')}</ol></nav>`, 'Contents');
    files.push({ name: 'OEBPS/text/nav.xhtml', data: nav });
    const opf = opfDocument({
      version: '3.0',
      metadata: `${common}<meta property="dcterms:modified">2024-01-01T00:00:00Z</meta>`,
      manifest: `${coverItem}<item id="nav" href="text/nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>${manifest.join('\n')}`,
      spine: `<itemref idref="cover-page"/>${spine.join('')}`,
    });
    return zip([{ name: 'mimetype', data: 'application/epub+zip', compress: false }, { name: 'META-INF/container.xml', data: containerXml('OEBPS/content.opf') }, { name: 'OEBPS/content.opf', data: opf }, ...files]);
  }
  const ncx = `<?xml version="1.0" encoding="UTF-8"?><ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1"><head><meta name="dtb:uid" content="${book.id}"/></head><docTitle><text>${book.title}</text></docTitle><navMap>${Array.from({ length: chapters }, (_, i) => `<navPoint id="n${i + 1}" playOrder="${i + 1}"><navLabel><text>Chapter ${i + 1}</text></navLabel><content src="text/chapter${i + 1}.xhtml"/></navPoint>`).join('')}</navMap></ncx>`;
  files.push({ name: 'OEBPS/toc.ncx', data: ncx });
  const opf = opfDocument({
    version: '2.0',
    metadata: `${common}<meta name="cover" content="cover-image"/>`,
    manifest: `${coverItem}<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>${manifest.join('\n')}`,
    spine: `<itemref idref="cover-page"/>${spine.join('')}`,
    guide: '<reference type="cover" title="Cover" href="text/cover.xhtml"/>',
  });
  return zip([{ name: 'mimetype', data: 'application/epub+zip', compress: false }, { name: 'META-INF/container.xml', data: containerXml('OEBPS/content.opf') }, { name: 'OEBPS/content.opf', data: opf }, ...files]);
}

async function pdf(rng: Rng, book: BookInfo, kind: 'cover' | 'scan' | 'text', pool: ImagePool): Promise<Buffer> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  doc.setTitle(book.title);
  doc.setAuthor(book.author);
  doc.setSubject(`${book.series}, book ${book.index}`);
  doc.setCreationDate(new Date(Date.UTC(between(rng, 2000, 2024), between(rng, 0, 11), between(rng, 1, 28))));
  const [width, height] = [432, 648];
  const fullPage = async (bytes: Buffer): Promise<void> => {
    const jpg = await doc.embedJpg(bytes);
    doc.addPage([width, height]).drawImage(jpg, { x: 0, y: 0, width, height });
  };
  if (kind === 'scan') {
    for (let p = between(rng, 4, 16); p > 0; p--) await fullPage(pick(rng, pool.scans));
    return Buffer.from(await doc.save());
  }
  const pages = between(rng, 8, 120);
  if (kind === 'cover') await fullPage(pick(rng, pool.covers));
  const font = await doc.embedFont(StandardFonts.TimesRoman);
  for (let p = kind === 'cover' ? 1 : 0; p < pages; p++) {
    const page = doc.addPage([width, height]);
    const lines = paragraphs(rng, 2200).join(' ').match(/.{1,78}(\s|$)/g) ?? [];
    page.drawText(lines.slice(0, 40).join('\n'), { x: 40, y: height - 50, size: 10, lineHeight: 13.5, font });
  }
  return Buffer.from(await doc.save());
}

function comicXml(rng: Rng, book: BookInfo, pages: number): string {
  return comicInfoXml({
    Title: book.title,
    Series: book.series,
    Number: book.index,
    Volume: between(rng, 1, 4),
    Year: between(rng, 1980, 2024),
    Writer: book.author,
    Penciller: `${pick(rng, FIRST)} ${pick(rng, LAST)}`,
    Publisher: `${pick(rng, NOUNS)} Comics`,
    Genre: pick(rng, ['Adventure', 'Fantasy', 'Science Fiction', 'Mystery']),
    PageCount: pages,
    LanguageISO: 'en',
    Summary: paragraphs(rng, 400).join(' '),
  });
}

function comicPages(rng: Rng, pool: ImagePool): { name: string; data: Buffer }[] {
  const count = between(rng, 10, 40);
  return Array.from({ length: count }, (_, i) => ({ name: `${String(i + 1).padStart(3, '0')}.jpg`, data: pick(rng, pool.pages) }));
}

// ---- the library ----

type Plan = { format: CorpusFormat; variant: string };

/** The format of entry `i`, by the issue's shares, spread through the library rather than in runs. */
function planFor(rng: Rng): Plan {
  const r = rng() * 100;
  if (r < 33) return { format: 'EPUB', variant: 'epub2' };
  if (r < 70) return { format: 'EPUB', variant: 'epub3' };
  if (r < 84) {
    const p = rng();
    return p < 0.15 ? { format: 'scanned PDF', variant: 'scan' } : { format: 'PDF', variant: p < 0.85 ? 'cover' : 'text' };
  }
  if (r < 93) return { format: 'CBZ', variant: 'cbz' };
  if (r < 96) return { format: 'CBR', variant: rng() < 0.5 ? 'rar4' : 'rar5' };
  if (r < 98) return { format: 'M4B', variant: 'm4b' };
  return { format: 'MP3 folder', variant: 'mp3' };
}

const EXTENSION: Record<CorpusFormat, string> = { EPUB: 'epub', PDF: 'pdf', 'scanned PDF': 'pdf', CBZ: 'cbz', CBR: 'cbr', M4B: 'm4b', 'MP3 folder': '' };

/** Names a real library has somewhere: accents, CJK, brackets (which libvips reads as load options), marks, length. */
const ODD_TITLES = ['Ünïcødé Naïveté — Café', '東京の夜 (Tokyo Nights)', 'Book [Special Edition] {2nd}', 'What? Why! #1 & 50% Off', `${'Very Long Title '.repeat(9).trim()}`, " Leading and trailing spaces ", "O'Brien's \"Quoted\" Tale", 'Emoji 📚 Library', 'semi;colon,comma=equals', 'Dots...in.the.name'];

function safeSegment(name: string): string {
  return name.replace(/[/\0]/g, '-');
}

export async function buildRealCorpus(root: string, options: { entries?: number; seed?: number; log?: (line: string) => void } = {}): Promise<CorpusEntry[]> {
  const count = options.entries ?? 1000;
  const seed = options.seed ?? 14;
  const log = options.log ?? (() => {});
  const t = performance.now();
  const pool = await makePool(seed);
  log(`image pool: ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const rng = random(seed);
  const authors = Array.from({ length: Math.ceil(count / 4) }, () => `${pick(rng, FIRST)} ${pick(rng, LAST)}`);
  const entries: CorpusEntry[] = [];
  const plans = Array.from({ length: count }, () => planFor(rng));
  // About 3 %: a few broken files, exact duplicates and odd names, at fixed positions.
  const oddities = new Map<number, CorpusEntry['oddity']>();
  for (let i = 0; i < count; i++) {
    const r = rng();
    if (i > 20 && r < 0.01) oddities.set(i, 'broken');
    else if (i > 20 && r < 0.02) oddities.set(i, 'duplicate');
    else if (r < 0.03) oddities.set(i, 'odd-name');
  }
  const series = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    const plan = plans[i] as Plan;
    const oddity = oddities.get(i);
    const bookRng = random(seed * 1_000_003 + i);
    const author = pick(bookRng, authors);
    const seriesName = `${pick(bookRng, ADJECTIVES)} ${pick(bookRng, NOUNS)}`;
    const index = (series.get(`${author}/${seriesName}`) ?? 0) + 1;
    series.set(`${author}/${seriesName}`, index);
    const book: BookInfo = { title: oddity === 'odd-name' ? (ODD_TITLES[i % ODD_TITLES.length] as string) : title(bookRng), author, series: seriesName, index, id: `14-${seed}-${i}` };
    const folder = join(safeSegment(author), safeSegment(seriesName), `${String(index).padStart(2, '0')} - ${safeSegment(book.title)}`);
    const ext = EXTENSION[plan.format];
    const path = plan.format === 'MP3 folder' ? folder : join(folder, `${safeSegment(book.title)}.${ext}`);
    mkdirSync(join(root, plan.format === 'MP3 folder' ? path : dirname(path)), { recursive: true });

    if (oddity === 'duplicate') {
      // A second copy of an earlier book, as left behind by an import: same bytes, another folder.
      const original = entries.findLast((e) => e.format === plan.format && !e.oddity && plan.format !== 'MP3 folder');
      if (original) {
        const copy = join(safeSegment(author), 'Unsorted', original.path.split('/').at(-1) as string);
        mkdirSync(join(root, dirname(copy)), { recursive: true });
        copyFileSync(join(root, original.path), join(root, copy));
        entries.push({ path: copy, format: original.format, oddity, bytes: original.bytes });
        continue;
      }
    }
    let data: Buffer | undefined;
    switch (plan.variant) {
      case 'epub2':
      case 'epub3': {
        const png = bookRng() < 0.12;
        data = await epub(bookRng, book, plan.variant === 'epub2' ? 2 : 3, png ? { data: pick(bookRng, pool.pngCovers), ext: 'png' } : { data: pick(bookRng, pool.covers), ext: 'jpg' });
        break;
      }
      case 'cover':
      case 'text':
      case 'scan':
        data = await pdf(bookRng, book, plan.variant, pool);
        break;
      case 'cbz': {
        const pages = comicPages(bookRng, pool);
        data = await zip([{ name: 'ComicInfo.xml', data: comicXml(bookRng, book, pages.length) }, ...pages.map((p) => ({ ...p, compress: false }))]);
        break;
      }
      case 'rar4':
      case 'rar5': {
        const pages = comicPages(bookRng, pool);
        data = writeRar(plan.variant === 'rar4' ? 4 : 5, [{ name: 'ComicInfo.xml', data: Buffer.from(comicXml(bookRng, book, pages.length)) }, ...pages]);
        break;
      }
      case 'm4b': {
        const chapters = between(bookRng, 3, 6);
        const seconds = between(bookRng, 60, 120);
        const edges = Array.from({ length: chapters + 1 }, (_, c) => Math.round((c * seconds * 1000) / chapters));
        await writeAudio(join(root, path), 'm4b', {
          seconds,
          frequency: between(bookRng, 200, 900),
          cover: pick(bookRng, pool.squares),
          tags: { title: book.title, artist: book.author, album_artist: book.author, album: book.title, genre: 'Audiobook', date: String(between(bookRng, 1990, 2024)), comment: sentence(bookRng) },
          chapters: edges.slice(1).map((end, c) => ({ title: `Chapter ${c + 1}`, startMs: edges[c] as number, endMs: end })),
        });
        break;
      }
      case 'mp3': {
        const tracks = between(bookRng, 3, 6);
        for (let tr = 1; tr <= tracks; tr++) {
          await writeAudio(join(root, path, `${String(tr).padStart(2, '0')} - Chapter ${tr}.mp3`), 'mp3-id3v2.4', {
            seconds: between(bookRng, 15, 30),
            frequency: between(bookRng, 200, 900),
            tags: { title: `Chapter ${tr}`, artist: book.author, album_artist: book.author, album: book.title, track: `${tr}/${tracks}`, genre: 'Audiobook' },
          });
        }
        writeFileSync(join(root, path, 'cover.jpg'), pick(bookRng, pool.squares));
        break;
      }
    }
    if (data) {
      if (oddity === 'broken') {
        // Cut short, as a download or a copy that stopped; an empty file now and then.
        data = bookRng() < 0.25 ? Buffer.alloc(0) : data.subarray(0, Math.floor(data.length * 0.4));
      }
      writeFileSync(join(root, path), data);
    }
    entries.push({ path, format: plan.format, ...(oddity && oddity !== 'duplicate' ? { oddity } : {}), bytes: data?.length ?? 0 });
    if ((i + 1) % 100 === 0) log(`${i + 1}/${count} entries, ${((performance.now() - t) / 1000).toFixed(0)} s`);
  }
  writeFileSync(join(root, 'corpus.json'), JSON.stringify(entries, null, 1));
  return entries;
}

/** The corpus for `entries` and `seed`, built under bench/.corpus/ the first time and reused after. */
export async function realCorpus(entries = 1000, seed = 14, log: (line: string) => void = console.log): Promise<{ root: string; entries: CorpusEntry[] }> {
  const root = join(import.meta.dirname, '.corpus', `real-${entries}-seed${seed}`);
  const done = join(root, '.complete');
  if (!existsSync(done)) {
    const t = performance.now();
    rmSync(root, { recursive: true, force: true });
    mkdirSync(root, { recursive: true });
    await buildRealCorpus(root, { entries, seed, log });
    writeFileSync(done, '');
    log(`corpus: ${entries} entries built in ${((performance.now() - t) / 1000).toFixed(0)} s`);
  }
  return { root, entries: JSON.parse(readFileSync(join(root, 'corpus.json'), 'utf8')) as CorpusEntry[] };
}

if (import.meta.main) {
  const { root, entries } = await realCorpus(Number(process.argv[2] ?? 1000), Number(process.argv[3] ?? 14));
  console.log(`${root}: ${entries.length} entries`);
}

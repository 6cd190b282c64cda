import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { IAudioMetadata } from 'music-metadata';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractAudioFile, extractAudioFolder, listAudioTracks } from '../../src/core/formats/audio.ts';
import { audioChapters, codecName } from '../../src/core/formats/audio-stream.ts';
import { audioMetadata, copyrightHolder } from '../../src/core/formats/audio-tags.ts';
import { FormatError } from '../../src/core/formats/errors.ts';
import { coverJpeg, garbage, writeAudio, writeTruncated } from '../helpers/audio-fixtures.ts';
import { expectFormatError } from '../helpers/format-assertions.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';

let fixture: TempDir;
let redCover: Buffer;
let blueCover: Buffer;

const CHAPTERS = [
  { title: 'Opening', startMs: 0, endMs: 1000 },
  { title: 'Middle', startMs: 1000, endMs: 2500 },
  { title: 'End', startMs: 2500, endMs: 3000 },
];

beforeAll(async () => {
  fixture = makeTempDir();
  redCover = await coverJpeg(60, 90, '#c33');
  blueCover = await coverJpeg(80, 80, '#33c');
});
afterAll(() => fixture.remove());


async function imageSize(data: Buffer): Promise<[number | undefined, number | undefined]> {
  const meta = await sharp(data).metadata();
  return [meta.width, meta.height];
}

describe('extractAudioFile: M4B', () => {
  let file: string;
  beforeAll(async () => {
    file = await writeAudio(fixture.file('book.m4b'), 'm4b', {
      tags: {
        title: 'Part One',
        artist: 'Ann Author & Bob Writer',
        album: 'The Long Listen',
        composer: 'Ned Narrator',
        genre: 'Fantasy; Adventure',
        date: '2021-03-04',
        comment: 'A fine story.',
        grouping: 'Listening Saga',
        track: '3/7',
        copyright: '© 2021 Sound House',
      },
      chapters: CHAPTERS,
      cover: redCover,
    });
  });

  it('reads tags as book metadata', async () => {
    const { bookType, metadata } = await extractAudioFile(file);
    expect(bookType).toBe('AUDIOBOOK');
    expect(metadata).toMatchObject({
      title: 'The Long Listen',
      authors: ['Ann Author', 'Bob Writer'],
      narrator: 'Ned Narrator',
      categories: ['Fantasy', 'Adventure'],
      publishedDate: '2021-03-04',
      description: 'A fine story.',
      publisher: 'Sound House',
      seriesName: 'Listening Saga',
      seriesNumber: 3,
      seriesTotal: 7,
    });
  });

  it('reads stream properties and chapter atoms', async () => {
    const { audio } = await extractAudioFile(file);
    expect(audio).toMatchObject({ durationSeconds: 3, codec: 'AAC', sampleRate: 44100 });
    expect(audio!.bitrate).toBeGreaterThanOrEqual(28);
    expect(audio!.bitrate).toBeLessThanOrEqual(40);
    expect(audio!.channels).toBeGreaterThanOrEqual(1);
    expect(audio!.chapters.map((c) => [c.index, c.title, c.startTimeMs])).toEqual([
      [0, 'Opening', 0],
      [1, 'Middle', 1000],
      [2, 'End', 2500],
    ]);
    expect(audio!.chapters.map((c) => c.endTimeMs).slice(0, 2)).toEqual([1000, 2500]);
    const last = audio!.chapters[2]!;
    expect(Math.abs(last.endTimeMs - 3000)).toBeLessThan(100);
    expect(last.durationMs).toBe(last.endTimeMs - last.startTimeMs);
  });

  it('returns the embedded cover, or none with skipCover', async () => {
    const { cover } = await extractAudioFile(file);
    expect(cover?.mime).toBe('image/jpeg');
    expect(await imageSize(cover!.data)).toEqual([60, 90]);
    expect((await extractAudioFile(file, { skipCover: true })).cover).toBeUndefined();
  });

  it('prefers the long description and finds a narrator in a comment', async () => {
    const other = await writeAudio(fixture.file('described.m4a'), 'm4b', {
      tags: { title: 'Only A Title', artist: 'Solo Author', comment: 'Narrated by Pat Voice', synopsis: 'The long synopsis.', description: 'Short.' },
    });
    const { metadata, audio } = await extractAudioFile(other);
    expect(metadata).toMatchObject({ title: 'Only A Title', authors: ['Solo Author'], narrator: 'Pat Voice', description: 'The long synopsis.' });
    expect(audio!.chapters).toEqual([{ index: 0, title: 'Full Audiobook', startTimeMs: 0, endTimeMs: audio!.chapters[0]!.endTimeMs, durationMs: audio!.chapters[0]!.endTimeMs }]);
    expect(Math.abs(audio!.chapters[0]!.endTimeMs - 3000)).toBeLessThan(100);
  });
});

describe('extractAudioFile: MP3', () => {
  it('reads ID3v2.3 tags, TXXX custom frames, CHAP frames and APIC', async () => {
    const file = await writeAudio(fixture.file('book-v23.mp3'), 'mp3-id3v2.3', {
      tags: {
        title: 'Track',
        album_artist: 'Album Artist',
        artist: 'Track Artist',
        album: 'Mp3 Book',
        composer: 'Composer Person',
        narrator: 'Nora Reader',
        series: 'Mp3 Saga',
        'series-part': '2.5',
        asin: 'B00TESTASIN',
        isbn: '978-0-306-40615-7',
        publisher: 'Audio Pub',
        language: 'eng',
        date: '2019',
        genre: 'Mystery',
      },
      chapters: CHAPTERS,
      cover: redCover,
    });
    const { metadata, audio, cover } = await extractAudioFile(file);
    expect(metadata).toMatchObject({
      title: 'Mp3 Book',
      authors: ['Album Artist'],
      narrator: 'Nora Reader',
      seriesName: 'Mp3 Saga',
      seriesNumber: 2.5,
      asin: 'B00TESTASIN',
      isbn13: '9780306406157',
      publisher: 'Audio Pub',
      language: 'eng',
      publishedDate: '2019-01-01',
      categories: ['Mystery'],
    });
    expect(metadata.identifiers).toMatchObject({ asin: 'B00TESTASIN', isbn13: '9780306406157' });
    expect(audio).toMatchObject({ durationSeconds: 3, bitrate: 32, sampleRate: 44100, channels: 1, codec: 'MP3' });
    expect(audio!.chapters.map((c) => [c.title, c.startTimeMs, c.endTimeMs, c.durationMs])).toEqual([
      ['Opening', 0, 1000, 1000],
      ['Middle', 1000, 2500, 1500],
      ['End', 2500, 3000, 500],
    ]);
    expect(await imageSize(cover!.data)).toEqual([60, 90]);
  });

  it('reads ID3v2.4 tags and a full date', async () => {
    const file = await writeAudio(fixture.file('book-v24.mp3'), 'mp3-id3v2.4', {
      tags: { title: 'Lonely Track', artist: 'Four Author', date: '2020-05-17', comment: 'Version four.' },
      chapters: CHAPTERS.slice(0, 2),
    });
    const { metadata, audio } = await extractAudioFile(file);
    expect(metadata).toMatchObject({ title: 'Lonely Track', authors: ['Four Author'], publishedDate: '2020-05-17', description: 'Version four.' });
    expect(audio!.chapters.map((c) => c.title)).toEqual(['Opening', 'Middle']);
  });
});

describe('extractAudioFile: Opus', () => {
  it('reads Vorbis comments and Opus stream properties', async () => {
    const file = await writeAudio(fixture.file('book.opus'), 'opus', {
      tags: { title: 'Opus Part', artist: 'Ogg Author', album: 'Opus Book', genre: 'Poetry', date: '2018', SERIES: 'Ogg Saga', 'SERIES-PART': '4', NARRATOR: 'Val Voice' },
      seconds: 2,
    });
    const { metadata, audio, cover } = await extractAudioFile(file);
    expect(metadata).toMatchObject({
      title: 'Opus Book',
      authors: ['Ogg Author'],
      narrator: 'Val Voice',
      seriesName: 'Ogg Saga',
      seriesNumber: 4,
      categories: ['Poetry'],
      publishedDate: '2018-01-01',
    });
    expect(audio).toMatchObject({ durationSeconds: 2, codec: 'Opus', sampleRate: 48000, channels: 1 });
    expect(audio!.bitrate).toBeGreaterThan(0);
    expect(cover).toBeUndefined();
  });
});

describe('extractAudioFile: hostile input', () => {
  it('rejects a zero-byte m4b as EMPTY', async () => {
    const file = fixture.file('empty.m4b');
    fs.writeFileSync(file, '');
    await expectFormatError(extractAudioFile(file), 'EMPTY');
  });

  it('rejects garbage bytes named .mp3 and .m4b as CORRUPT', async () => {
    for (const name of ['garbage.mp3', 'garbage.m4b', 'garbage.opus']) {
      const file = fixture.file(name);
      fs.writeFileSync(file, garbage(8192));
      await expectFormatError(extractAudioFile(file), 'CORRUPT');
    }
  });

  it('handles an m4b cut in half: partial metadata or CORRUPT, never a crash', async () => {
    const whole = await writeAudio(fixture.file('whole.m4b'), 'm4b', { tags: { album: 'Cut' }, chapters: CHAPTERS });
    const cut = writeTruncated(whole, fixture.file('half.m4b'), 0.5);
    try {
      const result = await extractAudioFile(cut);
      expect(result.bookType).toBe('AUDIOBOOK');
    } catch (error) {
      expect(error).toBeInstanceOf(FormatError);
      expect((error as FormatError).code).toBe('CORRUPT');
    }
  });

  it('reads what is left of a truncated mp3', async () => {
    const whole = await writeAudio(fixture.file('whole.mp3'), 'mp3-id3v2.3', { tags: { album: 'Cut Mp3' }, chapters: CHAPTERS });
    const cut = writeTruncated(whole, fixture.file('half.mp3'), 0.5);
    const { metadata, audio } = await extractAudioFile(cut);
    expect(metadata.title).toBe('Cut Mp3');
    expect(audio!.codec).toBe('MP3');
  });

  it('reports a missing file as IO', async () => {
    await expectFormatError(extractAudioFile(fixture.file('missing.m4b')), 'IO');
  });
});

describe('extractAudioFolder', () => {
  let folder: string;
  beforeAll(async () => {
    folder = fixture.file('Folder Book Dir');
    fs.mkdirSync(folder);
    // Written out of order, and named so that plain string sorting would put "Track 10" before "Track 2".
    await writeAudio(path.join(folder, 'Track 10.mp3'), 'mp3-id3v2.3', { seconds: 2, frequency: 660 });
    await writeAudio(path.join(folder, 'Track 2.mp3'), 'mp3-id3v2.3', { tags: { title: 'The Second' }, seconds: 3, frequency: 550, cover: redCover });
    await writeAudio(path.join(folder, 'Track 1.mp3'), 'mp3-id3v2.3', {
      tags: { title: 'The First', album: 'Folder Book', artist: 'Folder Author', composer: 'Folder Narrator', genre: 'History' },
      seconds: 2,
    });
    fs.writeFileSync(path.join(folder, 'cover.jpg'), blueCover);
    fs.writeFileSync(path.join(folder, '._Track 1.mp3'), garbage(512));
    fs.writeFileSync(path.join(folder, 'notes.txt'), 'not audio');
  });

  it('lists the tracks in natural order, skipping hidden and non-audio files', async () => {
    expect(await listAudioTracks(folder)).toEqual(['Track 1.mp3', 'Track 2.mp3', 'Track 10.mp3'].map((n) => path.join(folder, n)));
  });

  it('takes metadata from the first track and makes one chapter per track', async () => {
    const { bookType, metadata, audio } = await extractAudioFolder(folder);
    expect(bookType).toBe('AUDIOBOOK');
    expect(metadata).toMatchObject({ title: 'Folder Book', authors: ['Folder Author'], narrator: 'Folder Narrator', categories: ['History'] });
    expect(audio).toMatchObject({ durationSeconds: 7, codec: 'MP3', bitrate: 32, sampleRate: 44100, channels: 1 });
    const chapters = audio!.chapters;
    expect(chapters.map((c) => [c.index, c.title])).toEqual([
      [0, 'The First'],
      [1, 'The Second'],
      [2, 'Track 10'],
    ]);
    expect(chapters[0]!.startTimeMs).toBe(0);
    for (let i = 1; i < chapters.length; i++) expect(chapters[i]!.startTimeMs).toBe(chapters[i - 1]!.endTimeMs);
    expect(Math.abs(chapters[1]!.startTimeMs - 2000)).toBeLessThan(100);
    expect(Math.abs(chapters[2]!.startTimeMs - 5000)).toBeLessThan(150);
    expect(Math.abs(chapters[2]!.endTimeMs - 7000)).toBeLessThan(200);
  });

  it('prefers the folder image over embedded pictures', async () => {
    const { cover } = await extractAudioFolder(folder);
    expect(cover?.mime).toBe('image/jpeg');
    expect(await imageSize(cover!.data)).toEqual([80, 80]);
    expect((await extractAudioFolder(folder, { skipCover: true })).cover).toBeUndefined();
  });

  it('falls back to the first embedded picture and to the folder name', async () => {
    const bare = fixture.file('Untagged Book');
    fs.mkdirSync(bare);
    await writeAudio(path.join(bare, '01.mp3'), 'mp3-id3v2.3', { seconds: 2 });
    await writeAudio(path.join(bare, '02.mp3'), 'mp3-id3v2.3', { seconds: 2, cover: redCover });
    const { metadata, cover, audio } = await extractAudioFolder(bare);
    expect(metadata.title).toBe('Untagged Book');
    expect(audio!.chapters.map((c) => c.title)).toEqual(['01', '02']);
    expect(await imageSize(cover!.data)).toEqual([60, 90]);
  });

  it('rejects an empty folder and a folder without audio as EMPTY', async () => {
    const empty = fixture.file('empty-folder');
    fs.mkdirSync(empty);
    await expectFormatError(extractAudioFolder(empty), 'EMPTY', /no audio tracks/);
    fs.writeFileSync(path.join(empty, 'cover.jpg'), blueCover);
    await expectFormatError(extractAudioFolder(empty), 'EMPTY');
    expect(await listAudioTracks(empty)).toEqual([]);
  });

  it('names the broken track of a folder', async () => {
    const broken = fixture.file('broken-folder');
    fs.mkdirSync(broken);
    await writeAudio(path.join(broken, '1.mp3'), 'mp3-id3v2.3', { seconds: 2 });
    fs.writeFileSync(path.join(broken, '2.mp3'), '');
    await expectFormatError(extractAudioFolder(broken), 'CORRUPT', /track "2\.mp3"/);
  });

  it('reports a missing folder as IO', async () => {
    await expectFormatError(extractAudioFolder(fixture.file('no-such-folder')), 'IO');
    await expectFormatError(listAudioTracks(fixture.file('no-such-folder')), 'IO');
  });
});

describe('extractAudioFile with blocking reads (scan workers)', () => {
  const openFiles = (): number => fs.readdirSync('/proc/self/fd').length;

  it('reads the same tags, stream, chapters and cover as through the thread pool, and closes every file', async () => {
    // A noisy cover of ~100 KB and 40 s of audio: reads larger than the read-ahead window, and many windows per file.
    const bigCover = await sharp({ create: { width: 600, height: 900, channels: 3, background: '#888', noise: { type: 'gaussian', mean: 128, sigma: 40 } } }).jpeg({ quality: 90 }).toBuffer();
    expect(bigCover.length).toBeGreaterThan(64 * 1024);
    const tags = { title: 'Blocking', album: 'Read Ahead', artist: 'Wendy Window', composer: 'Nina Narrator', date: '2019' };
    const files = [
      await writeAudio(fixture.file('blocking.m4b'), 'm4b', { tags, chapters: CHAPTERS, cover: bigCover, seconds: 40 }),
      await writeAudio(fixture.file('blocking.mp3'), 'mp3-id3v2.3', { tags, chapters: CHAPTERS, cover: bigCover, seconds: 40 }),
      await writeAudio(fixture.file('blocking-v24.mp3'), 'mp3-id3v2.4', { tags, seconds: 5 }),
      await writeAudio(fixture.file('blocking.opus'), 'opus', { tags, seconds: 5 }),
    ];
    files.push(writeTruncated(files[1]!, fixture.file('blocking-cut.mp3'), 0.9));
    const before = openFiles();
    for (const file of files) {
      const pooled = await extractAudioFile(file);
      const blocking = await extractAudioFile(file, { blocking: true });
      expect(blocking, file).toEqual(pooled);
      expect(blocking.audio!.durationSeconds, file).toBeGreaterThan(0);
    }
    const m4b = await extractAudioFile(files[0]!, { blocking: true });
    expect(m4b.audio!.chapters.map((c) => c.title)).toEqual(['Opening', 'Middle', 'End']);
    expect(m4b.cover!.data.equals(bigCover)).toBe(true);
    expect(openFiles()).toBe(before);
  });

  it('reads a folder audiobook the same way', async () => {
    const folder = fixture.file('Blocking Folder');
    fs.mkdirSync(folder);
    await writeAudio(path.join(folder, '01.mp3'), 'mp3-id3v2.3', { tags: { title: 'One', album: 'Blocking Folder Book' }, seconds: 3, cover: redCover });
    await writeAudio(path.join(folder, '02.mp3'), 'mp3-id3v2.3', { tags: { title: 'Two' }, seconds: 2 });
    expect(await extractAudioFolder(folder, { blocking: true })).toEqual(await extractAudioFolder(folder));
  });

  it('fails as the thread pool does: EMPTY, CORRUPT, IO, and no file left open', async () => {
    const before = openFiles();
    const empty = fixture.file('blocking-empty.m4b');
    fs.writeFileSync(empty, '');
    await expectFormatError(extractAudioFile(empty, { blocking: true }), 'EMPTY');
    for (const name of ['blocking-garbage.mp3', 'blocking-garbage.m4b']) {
      const file = fixture.file(name);
      fs.writeFileSync(file, garbage(40_000));
      await expectFormatError(extractAudioFile(file, { blocking: true }), 'CORRUPT');
    }
    await expectFormatError(extractAudioFile(fixture.file('blocking-missing.m4b'), { blocking: true }), 'IO');
    expect(openFiles()).toBe(before);
  });
});

describe('audio tag mapping', () => {
  function parsed(native: Record<string, { id: string; value: unknown }[]>, common: Partial<IAudioMetadata['common']> = {}): IAudioMetadata {
    return {
      format: { trackInfo: [], tagTypes: [] },
      native,
      quality: { warnings: [] },
      common: { track: { no: null, of: null }, disk: { no: null, of: null }, movementIndex: { no: null, of: null }, ...common },
    };
  }

  it('reads MP4 freeform atoms and ©nrt, and prefers an explicit narrator over the composer', () => {
    const meta = audioMetadata(
      parsed({
        iTunes: [
          { id: '----:com.apple.iTunes:SERIES', value: 'Freeform Saga' },
          { id: '----:com.apple.iTunes:SERIES-PART', value: '6' },
          { id: '©nrt', value: 'Atom Narrator' },
          { id: '----:com.apple.iTunes:ISBN', value: '0306406152' },
        ],
      }, { album: 'Atom Book', composer: ['Some Composer'], copyright: '℗ 2020 Label Audio' }),
      { trackNumberIsSeriesNumber: true },
    );
    expect(meta).toMatchObject({ title: 'Atom Book', seriesName: 'Freeform Saga', seriesNumber: 6, narrator: 'Atom Narrator', isbn10: '0306406152', publisher: 'Label Audio' });
  });

  it('uses the track number as series number only for a single-file grouping series', () => {
    const tags = parsed({}, { grouping: 'Group Saga', track: { no: 2, of: 9 } });
    expect(audioMetadata(tags, { trackNumberIsSeriesNumber: true })).toMatchObject({ seriesName: 'Group Saga', seriesNumber: 2, seriesTotal: 9 });
    const folder = audioMetadata(tags, { trackNumberIsSeriesNumber: false });
    expect(folder.seriesName).toBe('Group Saga');
    expect(folder.seriesNumber).toBeUndefined();
  });

  it('ignores a zero year and keeps absent fields absent', () => {
    const meta = audioMetadata(parsed({}, { year: 0 }), { trackNumberIsSeriesNumber: true });
    expect(meta.publishedDate).toBeUndefined();
    expect(meta.title).toBeUndefined();
    expect(meta.authors).toEqual([]);
  });

  it('names codecs and copyright holders', () => {
    expect(['MPEG 1 Layer 3', 'MPEG 2 Layer 3', 'MPEG-4/AAC', 'Opus', 'FLAC', 'PCM'].map(codecName)).toEqual(['MP3', 'MP3', 'AAC', 'Opus', 'FLAC', 'PCM']);
    expect(copyrightHolder('© 2019 Penguin Audio')).toBe('Penguin Audio');
    expect(copyrightHolder('Copyright 2001-2005 by Big House')).toBe('Big House');
    expect(copyrightHolder('2019')).toBeUndefined();
  });

  it('gives untitled chapters a number and ends them at the next start', () => {
    const chapters = audioChapters({
      trackInfo: [],
      tagTypes: [],
      duration: 10,
      chapters: [
        { title: '', start: 4000, timeScale: 1000 },
        { title: 'First', start: 0, timeScale: 1000 },
      ],
    });
    expect(chapters).toEqual([
      { index: 0, title: 'First', startTimeMs: 0, endTimeMs: 4000, durationMs: 4000 },
      { index: 1, title: 'Chapter 2', startTimeMs: 4000, endTimeMs: 10000, durationMs: 6000 },
    ]);
  });
});

describe('audio loading', () => {
  it('does not load music-metadata until an audiobook is read', () => {
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
    const script = `
      import { registerHooks } from 'node:module';
      const seen = [];
      registerHooks({ resolve(specifier, context, next) { if (specifier === 'music-metadata') seen.push(specifier); return next(specifier, context); } });
      await import(${JSON.stringify(path.join(root, 'src/core/formats/audio.ts'))});
      process.stdout.write(JSON.stringify(seen));`;
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
    expect(JSON.parse(output)).toEqual([]);
  });
});

// Audiobooks: one audio file (m4b, m4a, mp3, opus), or a folder whose audio files are the tracks of one book.
import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { basename, extname, join, parse } from 'node:path';
import type { IAudioMetadata } from 'music-metadata';
import { AUDIO_TRACK_EXTENSIONS } from './audio-extensions.ts';
import { embeddedCover, folderImage } from './audio-cover.ts';
import { parseAudioFile, type ParseOptions } from './audio-parse.ts';
import { audioChapters, audioStream, chapter } from './audio-stream.ts';
import { audioMetadata } from './audio-tags.ts';
import { FormatError, asFormatError } from './errors.ts';
import type { AudioChapter, ExtractOptions, Extraction } from './types.ts';
import { clean, naturalCompare } from './values.ts';

export { AUDIO_TRACK_EXTENSIONS };

export async function extractAudioFile(path: string, options: ExtractOptions = {}): Promise<Extraction> {
  try {
    const parsed = await parseAudioFile(path, { skipCovers: options.skipCover ?? false, blocking: options.blocking ?? false });
    const extraction: Extraction = {
      bookType: 'AUDIOBOOK',
      metadata: audioMetadata(parsed, { trackNumberIsSeriesNumber: true }),
      audio: { ...audioStream(parsed.format), chapters: audioChapters(parsed.format) },
    };
    const cover = options.skipCover ? undefined : embeddedCover(parsed.common.picture);
    if (cover) extraction.cover = cover;
    return extraction;
  } catch (error) {
    throw asFormatError(error);
  }
}

/** The audio files directly inside `folderPath`, hidden files excluded, in natural order, as full paths. */
export async function listAudioTracks(folderPath: string): Promise<string[]> {
  try {
    return trackNames(await readdir(folderPath, { withFileTypes: true })).map((name) => join(folderPath, name));
  } catch (error) {
    throw asFormatError(error, 'IO');
  }
}

/**
 * A folder audiobook. Metadata comes from the first track's tags (album as the title, else the folder name); the
 * duration is the sum of the tracks, each track is one chapter; stream properties are the first track's. The cover is
 * a cover/folder/front image in the folder, else the first embedded picture found along the tracks. Every track must
 * be readable: a book with a broken track is reported rather than listed with wrong times.
 */
export async function extractAudioFolder(folderPath: string, options: ExtractOptions = {}): Promise<Extraction> {
  try {
    const entries = await readdir(folderPath, { withFileTypes: true });
    const names = trackNames(entries);
    if (names.length === 0) throw new FormatError('EMPTY', `no audio tracks (${[...AUDIO_TRACK_EXTENSIONS].join(', ')}) in the folder`);

    let cover = options.skipCover ? undefined : await folderImage(folderPath, entries);
    let first: IAudioMetadata | undefined;
    const chapters: AudioChapter[] = [];
    let offsetMs = 0;
    for (const [index, name] of names.entries()) {
      const track = await parseTrack(join(folderPath, name), name, { skipCovers: options.skipCover === true || cover !== undefined, blocking: options.blocking ?? false });
      first ??= track;
      if (!cover && !options.skipCover) cover = embeddedCover(track.common.picture);
      const durationMs = track.format.duration && track.format.duration > 0 ? Math.round(track.format.duration * 1000) : 0;
      chapters.push(chapter(index, clean(track.common.title) ?? parse(name).name, offsetMs, offsetMs + durationMs));
      offsetMs += durationMs;
    }
    if (!first) throw new FormatError('EMPTY', 'no audio tracks in the folder');

    const metadata = audioMetadata(first, { trackNumberIsSeriesNumber: false });
    metadata.title = clean(first.common.album) ?? clean(basename(folderPath));
    const extraction: Extraction = {
      bookType: 'AUDIOBOOK',
      metadata,
      audio: { ...audioStream(first.format), durationSeconds: Math.round(offsetMs / 1000), chapters },
    };
    if (cover) extraction.cover = cover;
    return extraction;
  } catch (error) {
    throw asFormatError(error);
  }
}

async function parseTrack(path: string, name: string, options: ParseOptions): Promise<IAudioMetadata> {
  try {
    return await parseAudioFile(path, options);
  } catch (error) {
    const reason = asFormatError(error);
    // An empty track makes the book broken, not empty.
    const code = reason.code === 'EMPTY' ? 'CORRUPT' : reason.code;
    throw new FormatError(code, `track "${name}": ${reason.message}`, { cause: error });
  }
}

function trackNames(entries: Dirent[]): string[] {
  return entries
    .filter((e) => (e.isFile() || e.isSymbolicLink()) && !e.name.startsWith('.'))
    .map((e) => e.name)
    .filter((name) => AUDIO_TRACK_EXTENSIONS.has(extname(name).slice(1).toLowerCase()))
    .sort(naturalCompare);
}

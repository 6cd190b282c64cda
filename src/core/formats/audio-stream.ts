// Stream properties and chapter list of an audio file, in the units Grimmory stores.
import type { IFormat } from 'music-metadata';
import type { AudioChapter, ExtractedAudio } from './types.ts';
import { clean } from './values.ts';

/** Grimmory's title for the one chapter of a file that has no chapter marks. */
export const WHOLE_BOOK_CHAPTER_TITLE = 'Full Audiobook';

/**
 * Duration in whole seconds, bitrate in kbit/s (Grimmory stores kbps, as jaudiotagger reports it), sample rate in Hz,
 * and a short codec name.
 */
export function audioStream(format: IFormat): Omit<ExtractedAudio, 'chapters'> {
  return {
    durationSeconds: positive(format.duration) ? Math.round(format.duration) : undefined,
    bitrate: positive(format.bitrate) ? Math.round(format.bitrate / 1000) : undefined,
    sampleRate: positive(format.sampleRate) ? Math.round(format.sampleRate) : undefined,
    channels: positive(format.numberOfChannels) ? format.numberOfChannels : undefined,
    codec: codecName(format.codec),
  };
}

/** music-metadata's codec descriptions ("MPEG 1 Layer 3", "MPEG-4/AAC") as the names people know. */
export function codecName(codec: string | undefined): string | undefined {
  const name = clean(codec);
  if (!name) return undefined;
  if (/layer\s*3/i.test(name)) return 'MP3';
  if (/layer\s*2/i.test(name)) return 'MP2';
  if (/alac/i.test(name)) return 'ALAC';
  if (/aac/i.test(name)) return 'AAC';
  if (/^opus$/i.test(name)) return 'Opus';
  if (/^vorbis/i.test(name)) return 'Vorbis';
  if (/^flac$/i.test(name)) return 'FLAC';
  return name;
}

/**
 * Chapters from MP4 chapter atoms or ID3 CHAP frames, in start order. A chapter without an end runs to the next
 * chapter's start (the last one to the end of the file). A file without chapters gets one chapter for all of it.
 */
export function audioChapters(format: IFormat): AudioChapter[] {
  const totalMs = positive(format.duration) ? Math.round(format.duration * 1000) : undefined;
  const marks = (format.chapters ?? [])
    .map((chapter) => {
      const scale = positive(chapter.timeScale) ? chapter.timeScale : 1;
      return {
        title: clean(chapter.title),
        startMs: Math.round((chapter.start / scale) * 1000),
        endMs: chapter.end !== undefined && Number.isFinite(chapter.end) ? Math.round((chapter.end / scale) * 1000) : undefined,
      };
    })
    .filter((mark) => Number.isFinite(mark.startMs) && mark.startMs >= 0)
    .sort((a, b) => a.startMs - b.startMs);

  if (marks.length === 0) {
    return totalMs === undefined ? [] : [chapter(0, WHOLE_BOOK_CHAPTER_TITLE, 0, totalMs)];
  }
  return marks.map((mark, i) => {
    const next = marks[i + 1]?.startMs;
    const end = mark.endMs ?? next ?? totalMs ?? mark.startMs;
    return chapter(i, mark.title ?? `Chapter ${i + 1}`, mark.startMs, Math.max(mark.startMs, end));
  });
}

export function chapter(index: number, title: string, startTimeMs: number, endTimeMs: number): AudioChapter {
  return { index, title, startTimeMs, endTimeMs, durationMs: endTimeMs - startTimeMs };
}

function positive(value: number | undefined): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0;
}

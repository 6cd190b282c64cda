// Builds tiny real audiobooks with ffmpeg: a few seconds of sine tone, tags, chapters and cover art.
import fs from 'node:fs';
import path from 'node:path';
import ffmpeg from '@ffmpeg-installer/ffmpeg';
import { execa } from 'execa';
import sharp from 'sharp';

export interface ChapterSpec {
  title: string;
  startMs: number;
  endMs: number;
}

export interface AudioSpec {
  /** ffmetadata keys: title, artist, album_artist, album, composer, genre, date, comment, grouping, or any custom key. */
  tags?: Record<string, string>;
  chapters?: ChapterSpec[];
  /** JPEG bytes to embed as the attached picture. */
  cover?: Buffer;
  seconds?: number;
  /** Sine pitch, so tracks differ. */
  frequency?: number;
}

/** ffmetadata escapes `=`, `;`, `#`, `\` and newlines with a backslash. */
function escapeMetadata(value: string): string {
  return value.replace(/[=;#\\\n]/g, (c) => `\\${c}`);
}

export function ffmetadata(spec: AudioSpec): string {
  const lines = [';FFMETADATA1'];
  for (const [key, value] of Object.entries(spec.tags ?? {})) lines.push(`${key}=${escapeMetadata(value)}`);
  for (const c of spec.chapters ?? []) {
    lines.push('', '[CHAPTER]', 'TIMEBASE=1/1000', `START=${c.startMs}`, `END=${c.endMs}`, `title=${escapeMetadata(c.title)}`);
  }
  return lines.join('\n') + '\n';
}

export function coverJpeg(width: number, height: number, background: string): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background } }).jpeg().toBuffer();
}

type Container = 'm4b' | 'mp3-id3v2.3' | 'mp3-id3v2.4' | 'opus';

/** Writes `file` in the given container; returns its path. */
export async function writeAudio(file: string, container: Container, spec: AudioSpec = {}): Promise<string> {
  const work = fs.mkdtempSync(path.join(path.dirname(file), '.ffmpeg-'));
  try {
    const metadataFile = path.join(work, 'metadata.txt');
    fs.writeFileSync(metadataFile, ffmetadata(spec));
    const seconds = spec.seconds ?? 3;
    const inputs = ['-f', 'lavfi', '-i', `sine=frequency=${spec.frequency ?? 440}:duration=${seconds}`, '-i', metadataFile];
    const maps = ['-map', '0:a', '-map_metadata', '1', '-map_chapters', '1'];
    const withCover = spec.cover !== undefined && container !== 'opus';
    if (withCover) {
      const coverFile = path.join(work, 'cover.jpg');
      fs.writeFileSync(coverFile, spec.cover!);
      inputs.push('-i', coverFile);
      maps.push('-map', '2:v', '-c:v', 'copy', '-disposition:v', 'attached_pic');
    }
    const codec: Record<Container, string[]> = {
      m4b: ['-c:a', 'aac', '-b:a', '32k', '-f', 'ipod'],
      'mp3-id3v2.3': ['-c:a', 'libmp3lame', '-b:a', '32k', '-id3v2_version', '3', '-f', 'mp3'],
      'mp3-id3v2.4': ['-c:a', 'libmp3lame', '-b:a', '32k', '-id3v2_version', '4', '-f', 'mp3'],
      opus: ['-c:a', 'libopus', '-b:a', '16k', '-f', 'ogg'],
    };
    await execa(ffmpeg.path, ['-hide_banner', '-loglevel', 'error', '-y', ...inputs, ...maps, '-ac', '1', ...codec[container], file]);
    return file;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** Writes a copy of `source` cut to `fraction` of its length. */
export function writeTruncated(source: string, target: string, fraction: number): string {
  const bytes = fs.readFileSync(source);
  fs.writeFileSync(target, bytes.subarray(0, Math.floor(bytes.length * fraction)));
  return target;
}

/** Deterministic non-audio bytes. */
export function garbage(length: number): Buffer {
  return Buffer.from(Array.from({ length }, (_, i) => (i * 7919 + 13) % 251));
}

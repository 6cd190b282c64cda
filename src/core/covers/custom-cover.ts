// A generated cover for a book that has none worth showing: the title and authors set in type over a colour field.
// Colours and layout follow from the text alone, so the same book always gets the same cover.
import { createHash } from 'node:crypto';
import { loadSharp } from './sharp-loader.ts';

export type CustomCoverShape = 'book' | 'audiobook';

const SIZES: Record<CustomCoverShape, [number, number]> = { book: [1000, 1500], audiobook: [1000, 1000] };
const FONTS = "'DejaVu Sans', 'Liberation Sans', Arial, Helvetica, sans-serif";
/** Average advance of a glyph of the bold face, in ems: enough to break lines before they overflow. */
const TITLE_EM = 0.62;
const AUTHOR_EM = 0.56;

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function hsl(h: number, s: number, l: number): string {
  return `hsl(${Math.round(((h % 360) + 360) % 360)}, ${s}%, ${l}%)`;
}

/** Words into lines no wider than `maxChars`; a word longer than a line is cut. */
export function wrap(text: string, maxChars: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (let word of text.split(/\s+/).filter(Boolean)) {
    while (word.length > maxChars) {
      if (line) lines.push(line);
      lines.push(word.slice(0, maxChars - 1) + '-');
      word = word.slice(maxChars - 1);
      line = '';
    }
    if (!line) line = word;
    else if (line.length + 1 + word.length <= maxChars) line += ` ${word}`;
    else {
      lines.push(line);
      line = word;
    }
  }
  if (line) lines.push(line);
  return lines;
}

/** The largest type size (from a fixed ladder) at which the text fits `maxLines` lines of `width`. */
function fit(text: string, width: number, sizes: number[], em: number, maxLines: number): { size: number; lines: string[] } {
  for (const size of sizes) {
    const lines = wrap(text, Math.max(4, Math.floor(width / (size * em))));
    if (lines.length <= maxLines) return { size, lines };
  }
  const size = sizes.at(-1) as number;
  const lines = wrap(text, Math.max(4, Math.floor(width / (size * em))));
  return { size, lines: lines.length > maxLines ? [...lines.slice(0, maxLines - 1), `${(lines[maxLines - 1] ?? '').slice(0, -1)}…`] : lines };
}

export interface CoverText {
  title: string | null | undefined;
  authors: readonly string[];
}

/** The SVG drawn over the background: gradient, frame, title block and author line. */
export function coverSvg(text: CoverText, shape: CustomCoverShape): string {
  const [w, h] = SIZES[shape];
  const title = (text.title ?? '').trim() || 'Untitled';
  const author = text.authors.filter((a) => a.trim() !== '').join(', ');
  const digest = createHash('sha256').update(`${title}\n${author}`).digest();
  const hue = ((digest[0] as number) * 256 + (digest[1] as number)) % 360;
  const accentHue = hue + 150 + ((digest[2] as number) % 60);
  const style = (digest[3] as number) % 3;

  const margin = Math.round(w * 0.09);
  const inner = w - 2 * margin;
  const titleFit = fit(title, inner, shape === 'book' ? [128, 112, 96, 84, 72, 62, 54, 46] : [112, 96, 84, 72, 62, 54, 46, 40], TITLE_EM, shape === 'book' ? 6 : 4);
  const authorFit = fit(author, inner, [58, 50, 44, 38, 32], AUTHOR_EM, 2);
  const titleLine = titleFit.size * 1.18;
  const titleTop = shape === 'book' ? h * 0.3 : h * 0.24;
  const titleBlock = titleFit.lines.length * titleLine;
  const ruleY = Math.round(titleTop + titleBlock + titleFit.size * 0.35);
  const authorTop = shape === 'book' ? h * 0.84 : h * 0.8;

  const decoration =
    style === 0
      ? `<circle cx="${w * 0.86}" cy="${h * 0.1}" r="${w * 0.34}" fill="${hsl(accentHue, 55, 55)}" fill-opacity="0.16"/>`
      : style === 1
        ? `<rect x="0" y="${h * 0.62}" width="${w}" height="${h * 0.06}" fill="${hsl(accentHue, 55, 60)}" fill-opacity="0.22"/>`
        : `<path d="M0 ${h} L${w} ${h * 0.55} L${w} ${h} Z" fill="${hsl(accentHue, 50, 50)}" fill-opacity="0.18"/>`;

  const titleTspans = titleFit.lines
    .map((line, i) => `<tspan x="${w / 2}" y="${Math.round(titleTop + (i + 0.8) * titleLine)}">${escapeXml(line)}</tspan>`)
    .join('');
  const authorTspans = authorFit.lines
    .map((line, i) => `<tspan x="${w / 2}" y="${Math.round(authorTop + i * authorFit.size * 1.2)}">${escapeXml(line)}</tspan>`)
    .join('');

  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}">`,
    '<defs><linearGradient id="bg" x1="0" y1="0" x2="0.35" y2="1">',
    `<stop offset="0" stop-color="${hsl(hue, 48, 34)}"/><stop offset="1" stop-color="${hsl(hue + 28, 52, 15)}"/>`,
    '</linearGradient></defs>',
    `<rect width="${w}" height="${h}" fill="url(#bg)"/>`,
    decoration,
    `<rect x="${margin / 2}" y="${margin / 2}" width="${w - margin}" height="${h - margin}" fill="none" stroke="${hsl(accentHue, 60, 78)}" stroke-opacity="0.55" stroke-width="4"/>`,
    `<text font-family="${FONTS}" font-weight="bold" font-size="${titleFit.size}" fill="#fbf8f1" text-anchor="middle">${titleTspans}</text>`,
    `<rect x="${w / 2 - w * 0.12}" y="${ruleY}" width="${w * 0.24}" height="6" fill="${hsl(accentHue, 65, 70)}"/>`,
    author ? `<text font-family="${FONTS}" font-size="${authorFit.size}" fill="${hsl(accentHue, 70, 85)}" text-anchor="middle">${authorTspans}</text>` : '',
    '</svg>',
  ].join('');
}

/** The cover as a JPEG: a solid base with the SVG composited over it. */
export async function renderCustomCover(text: CoverText, shape: CustomCoverShape = 'book'): Promise<Buffer> {
  const sharp = await loadSharp();
  const [w, h] = SIZES[shape];
  const svg = Buffer.from(coverSvg(text, shape), 'utf8');
  return sharp({ create: { width: w, height: h, channels: 3, background: '#202020' } })
    .composite([{ input: svg, top: 0, left: 0 }])
    .jpeg({ quality: 88 })
    .toBuffer();
}

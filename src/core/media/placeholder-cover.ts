// The image sent for a book that has no cover, as Grimmory sends its missing-cover picture (200, not 404).
import { loadSharp } from '../covers/sharp-loader.ts';

let placeholder: Promise<Buffer> | undefined;

/** A plain 250×350 JPEG, made once per process. */
export function placeholderCover(): Promise<Buffer> {
  // sharp (libvips) loads only when a coverless book is first asked for: the daemon starts without it.
  placeholder ??= loadSharp().then((sharp) => sharp({ create: { width: 250, height: 350, channels: 3, background: '#d9d9de' } })
    .composite([{ input: Buffer.from('<svg width="250" height="350"><rect x="60" y="110" width="130" height="130" rx="12" fill="none" stroke="#a3a3ad" stroke-width="8"/><path d="M80 220 L115 175 L140 205 L155 190 L175 220 Z" fill="#a3a3ad"/></svg>'), top: 0, left: 0 }])
    .jpeg({ quality: 80 })
    .toBuffer());
  return placeholder;
}

// Renders page one of a PDF as its cover, at a size decided by us rather than by the page's MediaBox.
import type { PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { FormatError } from './errors.ts';
import type { ExtractedCover } from './types.ts';

export interface CoverRenderLimits {
  /** Target length of the longer side, in pixels. */
  longSide: number;
  /** Hard ceiling on width × height, whatever the page claims. */
  maxPixels: number;
  timeoutMs: number;
}

export interface CoverSize {
  scale: number;
  width: number;
  height: number;
}

/** The render scale for a page of `pageWidth` × `pageHeight` points; undefined when the page has no usable size. */
export function coverSize(
  pageWidth: number,
  pageHeight: number,
  limits: Pick<CoverRenderLimits, 'longSide' | 'maxPixels'>,
): CoverSize | undefined {
  if (!(pageWidth > 0 && pageHeight > 0 && Number.isFinite(pageWidth) && Number.isFinite(pageHeight))) return undefined;
  let scale = limits.longSide / Math.max(pageWidth, pageHeight);
  if (pageWidth * scale * pageHeight * scale > limits.maxPixels) scale = Math.sqrt(limits.maxPixels / (pageWidth * pageHeight));
  // The epsilon keeps 792 × (1000 / 792) from flooring to 999; a sliver page still gets one pixel across.
  const width = Math.max(1, Math.floor(pageWidth * scale + 1e-6));
  const height = Math.max(1, Math.floor(pageHeight * scale + 1e-6));
  return { scale, width, height };
}

/** Page one as a JPEG, or undefined when the page has no drawable size. Rendering errors throw. */
export async function renderCover(document: PDFDocumentProxy, limits: CoverRenderLimits): Promise<ExtractedCover | undefined> {
  const page = await document.getPage(1);
  try {
    const natural = page.getViewport({ scale: 1 });
    const size = coverSize(natural.width, natural.height, limits);
    if (!size) return undefined;
    const viewport = page.getViewport({ scale: size.scale });
    const { createCanvas } = await import('@napi-rs/canvas');
    const canvas = createCanvas(size.width, size.height);
    const task = page.render({ canvas: canvas as never, viewport, background: '#ffffff' });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        task.cancel();
        reject(new FormatError('CORRUPT', `rendering page one took longer than ${limits.timeoutMs} ms`));
      }, limits.timeoutMs);
    });
    try {
      await Promise.race([task.promise, timeout]);
    } finally {
      clearTimeout(timer);
    }
    try {
      return { data: await canvas.encode('jpeg', 85), mime: 'image/jpeg' };
    } finally {
      // Frees the pixels now rather than when the canvas is collected: V8 counts them as external memory, and a few
      // MB per PDF left for the collector set off a full collection every few PDFs (a third of the PDF's time).
      canvas.width = 0;
      canvas.height = 0;
    }
  } finally {
    page.cleanup();
  }
}

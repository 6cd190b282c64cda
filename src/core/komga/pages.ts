// Pages of a book for Komga readers: comic archive entries in natural order, or PDF pages rendered to images.
import { stat } from 'node:fs/promises';
import type { PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { coverSize } from '../formats/pdf-cover.ts';
import { PDF_LIMITS } from '../formats/pdf.ts';

export interface PageInfo {
  number: number;
  fileName: string;
  mediaType: string;
  sizeBytes?: number;
}

export interface PageImage {
  data: Buffer;
  mime: string;
}

/** The long side a rendered PDF page gets, and the pixel ceiling whatever the page claims. */
export const PDF_PAGE_LIMITS = { longSide: 2000, maxPixels: 25_000_000, timeoutMs: 30_000 };

export async function comicPages(path: string): Promise<PageInfo[]> {
  const [{ withComicArchive }, { orderPages, pageMime }] = await Promise.all([import('../formats/comic-archive.ts'), import('../formats/comic-pages.ts')]);
  return withComicArchive(path, async (archive) => {
    const entries = await archive.list();
    const sizes = new Map(entries.map((e) => [e.name, e.size]));
    return orderPages(entries.map((e) => e.name)).map((name, i) => ({ number: i + 1, fileName: name, mediaType: pageMime(name) ?? 'application/octet-stream', sizeBytes: sizes.get(name) ?? 0 }));
  });
}

/** Page `number` (1-based) of a comic archive; undefined when there is no such page. */
export async function comicPage(path: string, number: number): Promise<PageImage | undefined> {
  const [{ withComicArchive }, { orderPages, pageMime }] = await Promise.all([import('../formats/comic-archive.ts'), import('../formats/comic-pages.ts')]);
  return withComicArchive(path, async (archive) => {
    const name = orderPages((await archive.list()).map((e) => e.name))[number - 1];
    if (name === undefined) return undefined;
    return { data: await archive.read(name), mime: pageMime(name) ?? 'application/octet-stream' };
  });
}

async function withPdf<T>(path: string, work: (document: PDFDocumentProxy, guard: <R>(p: Promise<R>, what: string) => Promise<R>) => Promise<T>): Promise<T> {
  const { openPdf } = await import('../formats/pdf-loader.ts');
  const { size } = await stat(path);
  const pdf = await openPdf(path, size, { timeoutMs: PDF_LIMITS.openTimeoutMs, maxInMemoryBytes: PDF_LIMITS.maxInMemoryBytes });
  try {
    return await work(pdf.document, (p, what) => pdf.guard(p, PDF_PAGE_LIMITS.timeoutMs, what));
  } finally {
    await pdf.close();
  }
}

export async function pdfPages(path: string): Promise<PageInfo[]> {
  const count = await withPdf(path, async (document) => document.numPages);
  return Array.from({ length: count }, (_, i) => ({ number: i + 1, fileName: `page-${i + 1}.jpg`, mediaType: 'image/jpeg' }));
}

/** Page `number` (1-based) of a PDF rendered as JPEG (or PNG), its long side at most 2000 px; undefined when out of range. */
export async function pdfPage(path: string, number: number, format: 'jpeg' | 'png'): Promise<PageImage | undefined> {
  return withPdf(path, async (document, guard) => {
    if (number < 1 || number > document.numPages) return undefined;
    const page = await guard(document.getPage(number), `Opening page ${number}`);
    try {
      const natural = page.getViewport({ scale: 1 });
      const size = coverSize(natural.width, natural.height, PDF_PAGE_LIMITS);
      if (!size) return undefined;
      const { createCanvas } = await import('@napi-rs/canvas');
      const canvas = createCanvas(size.width, size.height);
      const task = page.render({ canvas: canvas as never, viewport: page.getViewport({ scale: size.scale }), background: '#ffffff' });
      try {
        await guard(task.promise, `Rendering page ${number}`);
      } catch (error) {
        task.cancel();
        throw error;
      }
      const data = format === 'png' ? await canvas.encode('png') : await canvas.encode('jpeg', 85);
      return { data, mime: format === 'png' ? 'image/png' : 'image/jpeg' };
    } finally {
      page.cleanup();
    }
  });
}

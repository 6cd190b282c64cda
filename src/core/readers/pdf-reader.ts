// What the web PDF reader asks of a book: the page count and the outline (bookmarks) with the page each one opens.
import { stat } from 'node:fs/promises';
import type { PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { asFormatError } from '../formats/errors.ts';
import { PDF_LIMITS } from '../formats/pdf.ts';

export interface PdfOutlineItem {
  title: string | null;
  /** 1-based; null when the entry points nowhere resolvable (a URL, a broken destination). */
  pageNumber: number | null;
  children: PdfOutlineItem[] | null;
}

export interface PdfBookInfo {
  pageCount: number;
  outline: PdfOutlineItem[] | null;
}

type OutlineNode = Awaited<ReturnType<PDFDocumentProxy['getOutline']>>[number];

const MAX_OUTLINE_DEPTH = 16;
const MAX_OUTLINE_ITEMS = 5_000;
const OUTLINE_TIMEOUT_MS = 30_000;

async function pageOf(document: PDFDocumentProxy, dest: OutlineNode['dest']): Promise<number | null> {
  try {
    const explicit = typeof dest === 'string' ? await document.getDestination(dest) : dest;
    const target = Array.isArray(explicit) ? explicit[0] : undefined;
    if (target === undefined || target === null) return null;
    if (typeof target === 'number') return target + 1;
    return (await document.getPageIndex(target as Parameters<PDFDocumentProxy['getPageIndex']>[0])) + 1;
  } catch {
    return null;
  }
}

async function outlineItems(document: PDFDocumentProxy, nodes: readonly OutlineNode[], depth: number, budget: { left: number }): Promise<PdfOutlineItem[]> {
  const items: PdfOutlineItem[] = [];
  for (const node of nodes) {
    if (budget.left-- <= 0) break;
    const nested = depth < MAX_OUTLINE_DEPTH && node.items.length > 0 ? await outlineItems(document, node.items, depth + 1, budget) : [];
    items.push({ title: node.title || null, pageNumber: await pageOf(document, node.dest), children: nested.length > 0 ? nested : null });
  }
  return items;
}

export async function pdfBookInfo(path: string): Promise<PdfBookInfo> {
  const { openPdf } = await import('../formats/pdf-loader.ts');
  try {
    const { size } = await stat(path);
    const pdf = await openPdf(path, size, { timeoutMs: PDF_LIMITS.openTimeoutMs, maxInMemoryBytes: PDF_LIMITS.maxInMemoryBytes });
    try {
      const outline = await pdf.guard(pdf.document.getOutline(), OUTLINE_TIMEOUT_MS, 'reading the PDF outline');
      const items = outline && outline.length > 0 ? await pdf.guard(outlineItems(pdf.document, outline, 0, { left: MAX_OUTLINE_ITEMS }), OUTLINE_TIMEOUT_MS, 'resolving the PDF outline') : [];
      return { pageCount: pdf.document.numPages, outline: items.length > 0 ? items : null };
    } finally {
      await pdf.close();
    }
  } catch (error) {
    throw asFormatError(error);
  }
}

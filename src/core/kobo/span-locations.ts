// Where in the KEPUB a web-reader position is: the chapter it names (or the one its overall percentage falls in) and
// the span at its percentage of that chapter, from the span map kept when the book was converted. With this, a
// position read in the browser opens at the same sentence on the device (two-way progress sync).
import { cachedSpanMap } from './kepub-cache.ts';
import type { SpanMap } from './kepub.ts';
import type { KoboPrimaryFile } from './kobo-books.ts';
import type { FileProgressForKobo, LocationResolver, ProgressForKobo, ResolvedLocation } from './reading-state.ts';

/** Loads what is needed to place the web-reader positions of some books; books without a span map get none. */
export type LocationLoader = (primaries: ReadonlyMap<number, KoboPrimaryFile | undefined>) => Promise<(bookId: number) => LocationResolver | undefined>;

function normalize(href: string): string {
  let path = href.replace(/[#?].*$/, '').replace(/\\/g, '/').replace(/^\/+/, '');
  try {
    path = decodeURIComponent(path);
  } catch {
    // keep it as written
  }
  return path;
}

function chapterByHref(map: SpanMap, href: string): string | undefined {
  const wanted = normalize(href);
  if (wanted === '') return undefined;
  const names = Object.keys(map);
  return names.find((n) => n === wanted) ?? names.find((n) => n.endsWith(`/${wanted}`) || wanted.endsWith(`/${n}`));
}

/** The location for a position, or undefined when the map cannot place it. */
export function locate(map: SpanMap, progress: ProgressForKobo, file: FileProgressForKobo | undefined): ResolvedLocation | undefined {
  const href = file?.position_href || progress.epub_progress_href;
  let name = href ? chapterByHref(map, href) : undefined;
  let chapterPercent = name === undefined ? undefined : (file?.content_source_progress_percent ?? undefined);
  if (name === undefined) {
    // By the overall percentage, over the chapters' text lengths.
    const overall = Math.min(100, Math.max(0, file?.progress_percent ?? progress.epub_progress_percent ?? 0));
    const total = Object.values(map).reduce((sum, c) => sum + c.length, 0);
    if (total === 0) return undefined;
    let target = (overall / 100) * total;
    for (const [entry, chapter] of Object.entries(map)) {
      if (target <= chapter.length || entry === Object.keys(map).at(-1)) {
        name = entry;
        chapterPercent = chapter.length === 0 ? 0 : Math.min(100, (target / chapter.length) * 100);
        break;
      }
      target -= chapter.length;
    }
  }
  const chapter = name === undefined ? undefined : map[name];
  if (!chapter || name === undefined || chapter.ids.length === 0) return undefined;
  const percent = Math.min(100, Math.max(0, chapterPercent ?? 0));
  const offset = (percent / 100) * chapter.length;
  let index = 0;
  while (index + 1 < chapter.offsets.length && (chapter.offsets[index + 1] as number) <= offset) index++;
  return { value: chapter.ids[index] as string, source: name, chapterPercent: percent };
}

/** Span maps from the KEPUB cache under `cacheRoot`. */
export function cachedLocations(cacheRoot: string): LocationLoader {
  return async (primaries) => {
    const maps = new Map<number, SpanMap>();
    await Promise.all(
      [...primaries].map(async ([bookId, file]) => {
        if (file?.bookType !== 'EPUB' || file.fingerprint === undefined) return;
        const map = await cachedSpanMap(cacheRoot, file.fingerprint);
        if (map) maps.set(bookId, map);
      }),
    );
    return (bookId) => {
      const map = maps.get(bookId);
      return map ? (progress, file) => locate(map, progress, file) : undefined;
    };
  };
}

// Maps audio tags (ID3, iTunes MP4 atoms, Vorbis comments) to book metadata, following audiobook tagging habits.
import type { IAudioMetadata } from 'music-metadata';
import { emptyMetadata } from './types.ts';
import type { ExtractedMetadata } from './types.ts';
import { addIsbn, clean, normalizeDate, parseNumber, splitPeople, uniqueList } from './values.ts';

/**
 * Custom tags by a container-neutral name: `TXXX:SERIES` (ID3), `----:com.apple.iTunes:SERIES` (MP4) and `SERIES`
 * (Vorbis, APE) are all found as `series`; standard frames keep their own id (`tcom`, `©nrt`, `mvin`).
 */
export class NativeTags {
  readonly #values = new Map<string, string[]>();

  constructor(native: IAudioMetadata['native']) {
    for (const tags of Object.values(native)) {
      for (const { id, value } of tags) {
        const text = typeof value === 'string' || typeof value === 'number' ? clean(value) : undefined;
        if (!text) continue;
        const key = NativeTags.#neutralName(id);
        const list = this.#values.get(key) ?? [];
        list.push(text);
        this.#values.set(key, list);
      }
    }
  }

  static #neutralName(id: string): string {
    const freeform = /^(?:TXXX|----:[^:]*):(.+)$/i.exec(id);
    return (freeform ? freeform[1]! : id).toLowerCase().replace(/[\s_-]+/g, '');
  }

  /** The first value of the first name present; names are matched ignoring case, spaces, `_` and `-`. */
  first(...names: string[]): string | undefined {
    for (const name of names) {
      const value = this.#values.get(NativeTags.#neutralName(name))?.[0];
      if (value) return value;
    }
    return undefined;
  }
}

const NARRATED_BY = /^\s*(?:narrated|read)\s+by[:\s]+(.+?)\s*\.?\s*$/i;

/**
 * Book metadata from one track's tags. Precedence, first present wins:
 * - title: album, then title (a single-file audiobook's title tag is often a chapter or part name)
 * - authors: album artist, then artist
 * - narrator: an explicit narrator tag (`©nrt`, `NARRATOR`, `NARRATEDBY`, `READER`), then composer, then a comment
 *   that says "Narrated by …"
 * - series: `SERIES` / `MVNM` (movement name, as Audiobookshelf writes it), then grouping (`©grp`, `TIT1`, `GRP1`);
 *   number from `SERIES-PART` / `MVIN`, else, for a grouping series of a single-file book, the track number and
 *   total (as Grimmory does; in a folder the track number is the track's, not the book's)
 * - description: long description (`ldes`), description (`desc`, `TXXX:DESCRIPTION`), then comment
 * - publisher: label / publisher, then the holder named in the copyright
 */
export function audioMetadata(parsed: IAudioMetadata, options: { trackNumberIsSeriesNumber: boolean }): ExtractedMetadata {
  const { common } = parsed;
  const native = new NativeTags(parsed.native);
  const meta = emptyMetadata();

  meta.title = clean(common.album) ?? clean(common.title);
  meta.subtitle = clean(common.subtitle?.[0]) ?? native.first('subtitle');
  meta.authors = splitPeople(clean(common.albumartist) ?? clean(common.artist));

  const comments = (common.comment ?? []).map((c) => clean(c.text)).filter((c): c is string => c !== undefined);
  const nativeComment = native.first('comment');
  if (nativeComment) comments.push(nativeComment);
  const narratedBy = comments.map((c) => NARRATED_BY.exec(c)?.[1]).find((n) => n !== undefined);
  meta.narrator = native.first('©nrt', 'narrator', 'narratedby', 'reader') ?? clean(common.composer?.[0]) ?? clean(narratedBy);

  const series = seriesOf(parsed, native, options.trackNumberIsSeriesNumber);
  meta.seriesName = series.name;
  meta.seriesNumber = series.number;
  meta.seriesTotal = series.total;

  // A "Narrated by …" line is credit, not a blurb, wherever the tagger put it.
  const descriptions = [
    clean(common.longDescription),
    clean(common.description?.[0]),
    native.first('description', 'summary', 'synopsis'),
    ...comments,
  ];
  meta.description = descriptions.find((text) => text !== undefined && !NARRATED_BY.test(text));
  meta.publisher =
    clean(common.label?.[0]) ?? clean(common.publisher?.[0]) ?? native.first('publisher', '©pub') ?? copyrightHolder(common.copyright);
  meta.publishedDate = [common.releasedate, common.date, common.originaldate, yearText(common.year)]
    .map((date) => normalizeDate(date))
    .find((date) => date !== undefined);
  meta.language = clean(common.language) ?? native.first('language', 'tlan');
  meta.categories = uniqueList((common.genre ?? []).flatMap((g) => g.split(/\s*[;,]\s*/)));

  const asin = clean(common.asin) ?? native.first('asin', 'audibleasin');
  if (asin) {
    meta.asin = asin;
    meta.identifiers.asin = asin;
  }
  const isbn = native.first('isbn');
  addIsbn(meta, isbn);
  if (meta.isbn13) meta.identifiers.isbn13 = meta.isbn13;
  if (meta.isbn10) meta.identifiers.isbn10 = meta.isbn10;

  const abridged = native.first('abridged');
  if (abridged) meta.abridged = /^(1|true|yes|abridged)$/i.test(abridged);
  return meta;
}

interface SeriesTags {
  name?: string;
  number?: number;
  total?: number;
}

function seriesOf(parsed: IAudioMetadata, native: NativeTags, trackNumberIsSeriesNumber: boolean): SeriesTags {
  const { common } = parsed;
  const explicit = native.first('series', 'mvnm', '©mvn') ?? clean(common.movement);
  if (explicit) {
    const part = native.first('seriespart', 'seriesindex', 'seriesnumber', 'mvin', '©mvi');
    return { name: explicit, number: parseNumber(part) ?? common.movementIndex.no ?? undefined };
  }
  const grouping = clean(common.grouping);
  if (grouping && !trackNumberIsSeriesNumber) return { name: grouping };
  if (grouping) return { name: grouping, number: common.track.no ?? undefined, total: common.track.of ?? undefined };
  return {};
}

/** Leading ©/℗/(c)/"Copyright", years or year ranges and "by", in any mix. */
const COPYRIGHT_PREFIX = /^(?:\s*(?:©|℗|\(c\)|\(p\)|copyright|by|\d{4}(?:\s*[-–]\s*\d{4})?)(?=[\s,.;:]|$)[\s,.;:]*)+/i;

/** "© 2019 Penguin Audio" → "Penguin Audio"; a bare year or symbol is not a publisher. */
export function copyrightHolder(copyright: string | undefined): string | undefined {
  const holder = clean(copyright?.replace(COPYRIGHT_PREFIX, ''));
  return holder && !/^\d+$/.test(holder) ? holder : undefined;
}

function yearText(year: number | undefined): string | undefined {
  return year && year > 0 ? String(year) : undefined;
}

// What a book's file says about itself right now (not what the catalog holds), as BookMetadata JSON.
import { extractComic } from '../formats/comic.ts';
import { folderAudiobookFormat, formatOf } from '../formats/index.ts';
import type { ExtractedComic, Extraction, Extractor } from '../formats/types.ts';
import type { Json } from './book-json.ts';
import type { LocatedFile } from './file-locations.ts';

function comicMetadataJson(comic: ExtractedComic): Json {
  const out: Json = {};
  const scalars: [string, unknown][] = [
    ['issueNumber', comic.issueNumber], ['volumeName', comic.volumeName], ['volumeNumber', comic.volumeNumber], ['storyArc', comic.storyArc],
    ['storyArcNumber', comic.storyArcNumber], ['alternateSeries', comic.alternateSeries], ['alternateIssue', comic.alternateIssue],
    ['imprint', comic.imprint], ['format', comic.format], ['blackAndWhite', comic.blackAndWhite], ['manga', comic.manga],
    ['readingDirection', comic.readingDirection], ['webLink', comic.webLink], ['notes', comic.notes],
  ];
  for (const [key, value] of scalars) if (value !== undefined) out[key] = value;
  const lists: [string, string[]][] = [
    ['pencillers', comic.pencillers], ['inkers', comic.inkers], ['colorists', comic.colorists], ['letterers', comic.letterers],
    ['coverArtists', comic.coverArtists], ['editors', comic.editors], ['characters', comic.characters], ['teams', comic.teams], ['locations', comic.locations],
  ];
  for (const [key, names] of lists) if (names.length > 0) out[key] = names;
  return out;
}

export function extractionJson(extraction: Extraction): Json {
  const m = extraction.metadata;
  const out: Json = {};
  const scalars: [string, unknown][] = [
    ['title', m.title], ['subtitle', m.subtitle], ['publisher', m.publisher], ['publishedDate', m.publishedDate], ['description', m.description],
    ['seriesName', m.seriesName], ['seriesNumber', m.seriesNumber], ['seriesTotal', m.seriesTotal], ['isbn13', m.isbn13], ['isbn10', m.isbn10],
    ['pageCount', m.pageCount], ['language', m.language], ['narrator', m.narrator], ['abridged', m.abridged], ['asin', m.asin],
    ['goodreadsId', m.goodreadsId], ['comicvineId', m.comicvineId], ['hardcoverId', m.hardcoverId], ['googleId', m.googleId],
    ['rating', m.rating], ['ageRating', m.ageRating],
  ];
  for (const [key, value] of scalars) if (value !== undefined) out[key] = value;
  out.authors = m.authors;
  out.categories = m.categories;
  out.tags = m.tags;
  if (extraction.fixedLayout) out.isFixedLayout = true;
  if (extraction.comic) out.comicMetadata = comicMetadataJson(extraction.comic);
  return out;
}

function extractorFor(file: LocatedFile): Extractor | undefined {
  if (file.folderBased) return folderAudiobookFormat.extract;
  return formatOf(file.fileName)?.extract;
}

/** Reads the file's embedded metadata; undefined when no extractor knows the file. Throws FormatError for a broken file. */
export async function fileMetadata(file: LocatedFile & { path: string }): Promise<Json | undefined> {
  const extract = extractorFor(file);
  if (!extract) return undefined;
  return extractionJson(await extract(file.path, { skipCover: true }));
}

/** ComicInfo.xml of a comic file as BookMetadata JSON. */
export async function comicInfoMetadata(path: string): Promise<Json> {
  return extractionJson(await extractComic(path, { skipCover: true }));
}

// FB2 <description>: title-info and publish-info → ExtractedMetadata, plus the id of the cover binary.
import { decodeNumericReferences, htmlToText } from './epub-html.ts';
import { addIdentifier } from './epub-identifiers.ts';
import { emptyMetadata, type ExtractedMetadata } from './types.ts';
import { clean, normalizeDate, parseNumber, uniqueList } from './values.ts';
import { attr, child, children, find, parseXml, text, type XmlNode } from './xml.ts';

export interface Fb2Description {
  metadata: ExtractedMetadata;
  /** Id of the `<binary>` the title-info coverpage points at (`#cover.jpg` → `cover.jpg`). */
  coverId: string | undefined;
}

function value(node: XmlNode | undefined): string | undefined {
  const raw = text(node);
  return raw === undefined ? undefined : clean(decodeNumericReferences(raw));
}

function personName(author: XmlNode): string | undefined {
  const parts = ['first-name', 'middle-name', 'last-name'].map((part) => value(child(author, part))).filter(Boolean);
  return parts.length > 0 ? parts.join(' ') : value(child(author, 'nickname'));
}

/**
 * The annotation as text with its paragraphs in order. The parsed tree groups children by name and loses mixed
 * content order, so the (already validated) source text of title-info is used instead.
 */
function annotationText(headXml: string): string | undefined {
  const titleInfo = headXml.match(/<(?:[\w.-]+:)?title-info\b[\s\S]*?<\/(?:[\w.-]+:)?title-info\s*>/)?.[0];
  const annotation = titleInfo?.match(/<(?:[\w.-]+:)?annotation\b[^>]*>([\s\S]*?)<\/(?:[\w.-]+:)?annotation\s*>/)?.[1];
  return htmlToText(annotation);
}

function applySequence(meta: ExtractedMetadata, sequences: XmlNode[]): boolean {
  const named = sequences.find((s) => clean(attr(s, 'name')));
  if (!named) return false;
  meta.seriesName = clean(decodeNumericReferences(attr(named, 'name') ?? ''));
  meta.seriesNumber = parseNumber(attr(named, 'number'));
  return true;
}

export function readDescription(headXml: string): Fb2Description {
  const description = find(parseXml(headXml, 'FB2 description'), 'description');
  const titleInfo = child(description, 'title-info');
  const publishInfo = child(description, 'publish-info');
  const meta = emptyMetadata();

  meta.title = value(child(titleInfo, 'book-title'));
  meta.authors = uniqueList(children(titleInfo, 'author').map(personName));
  const keywords = (value(child(titleInfo, 'keywords')) ?? '').split(/\s*[,;]\s*/);
  meta.categories = uniqueList([...children(titleInfo, 'genre').map(value), ...keywords]);
  meta.description = annotationText(headXml);
  meta.language = value(child(titleInfo, 'lang'));
  if (!applySequence(meta, children(titleInfo, 'sequence'))) applySequence(meta, children(publishInfo, 'sequence'));

  const dateNode = child(titleInfo, 'date');
  const writtenDate = normalizeDate(attr(dateNode, 'value')) ?? normalizeDate(value(dateNode));
  // The printed edition's year describes the publication better than the date the text was written.
  meta.publishedDate = normalizeDate(value(child(publishInfo, 'year'))) ?? writtenDate;
  meta.publisher = value(child(publishInfo, 'publisher'));
  const isbn = value(child(publishInfo, 'isbn'));
  if (isbn) addIdentifier(meta, { value: isbn, scheme: 'isbn' });

  const coverHref = attr(child(child(titleInfo, 'coverpage'), 'image'), 'href')?.trim();
  return { metadata: meta, coverId: coverHref?.startsWith('#') ? coverHref.slice(1) : undefined };
}

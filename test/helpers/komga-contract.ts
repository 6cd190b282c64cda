// Komga's DTOs as data, for checking answers the way strict clients read them. The key lists and types are written
// out by hand from Komga's DTO classes (gotson/komga, interfaces/api/rest/dto) and the kotlinx classes of Komelia's
// API library (Snd-R/komga-client), which decodes with `explicitNulls = true`: a property without a default must be
// present even when it may be null, a null is accepted only where the class says `?`, unknown keys are ignored.
// `keyMismatches` compares key sets exactly (Komga serializes every property); `decodeErrors` is the decoder.
import type { ErrorObject } from 'ajv';
import Ajv2020 from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { conformancePath } from './conformance.ts';

export type Kind =
  | 'string'
  | 'int'
  | 'long'
  | 'float'
  | 'bool'
  | 'instant'
  | 'date'
  | 'json'
  | { enum: readonly string[] }
  | { list: Kind }
  | { map: Kind }
  | { dto: string }
  | { nullable: Kind }
  /** Has a default in the client class: may be absent (never counted in the key set). */
  | { optional: Kind };

const n = (kind: Kind): Kind => ({ nullable: kind });
const o = (kind: Kind): Kind => ({ optional: kind });
const list = (kind: Kind): Kind => ({ list: kind });
const dto = (name: string): Kind => ({ dto: name });
const strings = list('string');

export const DTOS: Record<string, Record<string, Kind>> = {
  UserDto: {
    id: 'string',
    email: 'string',
    roles: strings,
    sharedAllLibraries: 'bool',
    sharedLibrariesIds: strings,
    labelsAllow: strings,
    labelsExclude: strings,
    ageRestriction: n(dto('AgeRestrictionDto')),
  },
  AgeRestrictionDto: { age: 'int', restriction: { enum: ['ALLOW_ONLY', 'EXCLUDE'] } },
  LibraryDto: {
    id: 'string',
    name: 'string',
    root: 'string',
    importComicInfoBook: 'bool',
    importComicInfoSeries: 'bool',
    importComicInfoCollection: 'bool',
    importComicInfoReadList: 'bool',
    importComicInfoSeriesAppendVolume: 'bool',
    importEpubBook: 'bool',
    importEpubSeries: 'bool',
    importMylarSeries: 'bool',
    importLocalArtwork: 'bool',
    importBarcodeIsbn: 'bool',
    scanForceModifiedTime: 'bool',
    scanInterval: { enum: ['DISABLED', 'HOURLY', 'EVERY_6H', 'EVERY_12H', 'DAILY', 'WEEKLY'] },
    scanOnStartup: 'bool',
    scanCbx: 'bool',
    scanPdf: 'bool',
    scanEpub: 'bool',
    scanDirectoryExclusions: strings,
    repairExtensions: 'bool',
    convertToCbz: 'bool',
    emptyTrashAfterScan: 'bool',
    seriesCover: { enum: ['FIRST', 'FIRST_UNREAD_OR_FIRST', 'FIRST_UNREAD_OR_LAST', 'LAST'] },
    hashFiles: 'bool',
    hashPages: 'bool',
    hashKoreader: 'bool',
    analyzeDimensions: 'bool',
    oneshotsDirectory: n('string'),
    unavailable: 'bool',
  },
  BookDto: {
    id: 'string',
    seriesId: 'string',
    seriesTitle: 'string',
    libraryId: 'string',
    name: 'string',
    url: 'string',
    number: 'int',
    created: 'instant',
    lastModified: 'instant',
    fileLastModified: 'instant',
    sizeBytes: 'long',
    size: 'string',
    media: dto('MediaDto'),
    metadata: dto('BookMetadataDto'),
    readProgress: n(dto('ReadProgressDto')),
    deleted: 'bool',
    fileHash: 'string',
    oneshot: 'bool',
  },
  MediaDto: {
    status: { enum: ['READY', 'UNKNOWN', 'ERROR', 'UNSUPPORTED', 'OUTDATED'] },
    mediaType: 'string',
    mediaProfile: 'string',
    pagesCount: 'int',
    comment: 'string',
    epubDivinaCompatible: 'bool',
    epubIsKepub: 'bool',
  },
  BookMetadataDto: {
    title: 'string',
    titleLock: 'bool',
    summary: 'string',
    summaryLock: 'bool',
    number: 'string',
    numberLock: 'bool',
    numberSort: 'float',
    numberSortLock: 'bool',
    releaseDate: n('date'),
    releaseDateLock: 'bool',
    authors: list(dto('AuthorDto')),
    authorsLock: 'bool',
    tags: strings,
    tagsLock: 'bool',
    isbn: 'string',
    isbnLock: 'bool',
    links: list(dto('WebLinkDto')),
    linksLock: 'bool',
    created: 'instant',
    lastModified: 'instant',
  },
  ReadProgressDto: { page: 'int', completed: 'bool', readDate: 'instant', created: 'instant', lastModified: 'instant', deviceId: 'string', deviceName: 'string' },
  AuthorDto: { name: 'string', role: 'string' },
  WebLinkDto: { label: 'string', url: 'string' },
  AlternateTitleDto: { label: 'string', title: 'string' },
  SeriesDto: {
    id: 'string',
    libraryId: 'string',
    name: 'string',
    url: 'string',
    created: 'instant',
    lastModified: 'instant',
    fileLastModified: 'instant',
    booksCount: 'int',
    booksReadCount: 'int',
    booksUnreadCount: 'int',
    booksInProgressCount: 'int',
    metadata: dto('SeriesMetadataDto'),
    booksMetadata: dto('BookMetadataAggregationDto'),
    deleted: 'bool',
    oneshot: 'bool',
  },
  SeriesMetadataDto: {
    status: { enum: ['ENDED', 'ONGOING', 'ABANDONED', 'HIATUS'] },
    statusLock: 'bool',
    title: 'string',
    titleLock: 'bool',
    titleSort: 'string',
    titleSortLock: 'bool',
    summary: 'string',
    summaryLock: 'bool',
    readingDirection: { enum: ['LEFT_TO_RIGHT', 'RIGHT_TO_LEFT', 'VERTICAL', 'WEBTOON'] },
    readingDirectionLock: 'bool',
    publisher: 'string',
    publisherLock: 'bool',
    ageRating: n('int'),
    ageRatingLock: 'bool',
    language: 'string',
    languageLock: 'bool',
    genres: strings,
    genresLock: 'bool',
    tags: strings,
    tagsLock: 'bool',
    totalBookCount: n('int'),
    totalBookCountLock: 'bool',
    sharingLabels: strings,
    sharingLabelsLock: 'bool',
    links: list(dto('WebLinkDto')),
    linksLock: 'bool',
    alternateTitles: list(dto('AlternateTitleDto')),
    alternateTitlesLock: 'bool',
    created: 'instant',
    lastModified: 'instant',
  },
  BookMetadataAggregationDto: {
    authors: list(dto('AuthorDto')),
    tags: strings,
    releaseDate: n('date'),
    summary: 'string',
    summaryNumber: 'string',
    created: 'instant',
    lastModified: 'instant',
  },
  CollectionDto: { id: 'string', name: 'string', ordered: 'bool', seriesIds: strings, createdDate: 'instant', lastModifiedDate: 'instant', filtered: 'bool' },
  ReadListDto: { id: 'string', name: 'string', summary: 'string', ordered: 'bool', bookIds: strings, createdDate: 'instant', lastModifiedDate: 'instant', filtered: 'bool' },
  PageDto: { number: 'int', fileName: 'string', mediaType: 'string', width: n('int'), height: n('int'), sizeBytes: n('long'), size: 'string' },
  TachiyomiReadProgressV2Dto: {
    booksCount: 'int',
    booksReadCount: 'int',
    booksUnreadCount: 'int',
    booksInProgressCount: 'int',
    lastReadContinuousNumberSort: 'float',
    maxNumberSort: 'float',
  },
  Pageable: { sort: dto('Sort'), offset: 'long', pageNumber: 'int', pageSize: 'int', paged: 'bool', unpaged: 'bool' },
  Sort: { empty: 'bool', sorted: 'bool', unsorted: 'bool' },
  // Readium (komga-client's Readium.kt and WebPub.kt): most properties have defaults there.
  R2Device: { id: 'string', name: 'string' },
  R2Location: { fragment: o(n(strings)), fragments: o(n(strings)), position: o(n('int')), progression: o(n('float')), totalProgression: o(n('float')) },
  R2Locator: { href: o('string'), type: o('string'), title: o(n('string')), locations: o(n(dto('R2Location'))), text: o(n({ map: 'string' })), koboSpan: o(n('string')) },
  R2Progression: { modified: 'instant', device: dto('R2Device'), locator: dto('R2Locator') },
  R2Positions: { total: 'int', positions: list(dto('R2Locator')) },
  WPPublication: {
    '@context': o('string'),
    metadata: dto('WPMetadata'),
    links: list(dto('WPLink')),
    images: o(list(dto('WPLink'))),
    readingOrder: o(list(dto('WPLink'))),
    resources: o(list(dto('WPLink'))),
    toc: o(list(dto('WPLink'))),
    landmarks: o(list(dto('WPLink'))),
    pageList: o(list(dto('WPLink'))),
  },
  WPMetadata: {
    title: 'string',
    identifier: o(n('string')),
    conformsTo: o(n('string')),
    modified: o(n('instant')),
    published: o(n('date')),
    language: o(n('string')),
    author: o(strings),
    publisher: o(strings),
    subject: o(strings),
    readingProgression: o(n({ enum: ['rtl', 'ltr', 'ttb', 'btt', 'auto'] })),
    description: o(n('string')),
    numberOfPages: o(n('int')),
    belongsTo: o(n(dto('WPBelongsTo'))),
    rendition: o({ map: 'json' }),
  },
  WPBelongsTo: { series: o(list(dto('WPContributor'))), collection: o(list(dto('WPContributor'))) },
  WPContributor: { name: 'string', position: o(n('float')), links: o(list(dto('WPLink'))) },
  WPLink: {
    title: o(n('string')),
    rel: o(n('string')),
    href: o(n('string')),
    type: o(n('string')),
    templated: o(n('bool')),
    width: o(n('int')),
    height: o(n('int')),
    alternate: o(list(dto('WPLink'))),
    children: o(list(dto('WPLink'))),
    properties: o({ map: 'json' }),
  },
};

/** Spring's Page of a DTO, as komga-client's `Page<T>` reads it. */
export function pageOf(item: string): Record<string, Kind> {
  return {
    content: list(dto(item)),
    pageable: dto('Pageable'),
    totalElements: 'int',
    totalPages: 'int',
    last: 'bool',
    number: 'int',
    sort: dto('Sort'),
    first: 'bool',
    numberOfElements: 'int',
    size: 'int',
    empty: 'bool',
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const shape = (name: string): Record<string, Kind> => {
  const page = /^Page<(\w+)>$/.exec(name);
  const found = page ? pageOf(page[1] as string) : DTOS[name];
  if (!found) throw new Error(`no DTO ${name}`);
  return found;
};

/** Keys missing from or added to each object, against the DTO, at every level (defaulted properties aside). */
export function keyMismatches(name: string, value: unknown, path = name): string[] {
  if (!isObject(value)) return [`${path}: not an object`];
  const fields = shape(name);
  const out: string[] = [];
  for (const [key, kind] of Object.entries(fields)) {
    const optional = typeof kind === 'object' && 'optional' in kind;
    if (!(key in value)) {
      if (!optional) out.push(`${path}.${key} missing`);
      continue;
    }
    out.push(...kindKeys(kind, value[key], `${path}.${key}`));
  }
  for (const key of Object.keys(value)) if (!(key in fields)) out.push(`${path}.${key} is not a property of ${name}`);
  return out;
}

function kindKeys(kind: Kind, value: unknown, path: string): string[] {
  if (typeof kind === 'string' || 'enum' in kind || 'map' in kind || value === null) return [];
  if ('nullable' in kind) return kindKeys(kind.nullable, value, path);
  if ('optional' in kind) return kindKeys(kind.optional, value, path);
  if ('list' in kind) return Array.isArray(value) ? value.flatMap((v, i) => kindKeys(kind.list, v, `${path}[${i}]`)) : [];
  return keyMismatches(kind.dto, value, path);
}

const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
const LOCAL_DATE = /^\d{4}-\d{2}-\d{2}$/;

/** What kotlinx (explicitNulls, ignoreUnknownKeys) would throw on, decoding `value` as the DTO. */
export function decodeErrors(name: string, value: unknown, path = name): string[] {
  if (!isObject(value)) return [`${path}: expected an object`];
  const out: string[] = [];
  for (const [key, kind] of Object.entries(shape(name))) {
    const optional = typeof kind === 'object' && 'optional' in kind;
    if (!(key in value)) {
      if (!optional) out.push(`${path}.${key}: MissingFieldException`);
      continue;
    }
    out.push(...decodeKind(optional ? (kind as { optional: Kind }).optional : kind, value[key], `${path}.${key}`));
  }
  return out;
}

function decodeKind(kind: Kind, value: unknown, path: string): string[] {
  if (typeof kind === 'object' && 'nullable' in kind) return value === null ? [] : decodeKind(kind.nullable, value, path);
  if (value === null) return [`${path}: null for a non-null property`];
  const wrong = (what: string): string[] => [`${path}: expected ${what}, got ${JSON.stringify(value)?.slice(0, 60)}`];
  switch (kind) {
    case 'string':
      return typeof value === 'string' ? [] : wrong('a string');
    case 'int':
      return typeof value === 'number' && Number.isInteger(value) && Math.abs(value) <= 2 ** 31 - 1 ? [] : wrong('an Int');
    case 'long':
      return typeof value === 'number' && Number.isInteger(value) ? [] : wrong('a Long');
    case 'float':
      return typeof value === 'number' && Number.isFinite(value) ? [] : wrong('a Float');
    case 'bool':
      return typeof value === 'boolean' ? [] : wrong('a Boolean');
    case 'instant':
      return typeof value === 'string' && INSTANT.test(value) && !Number.isNaN(Date.parse(value)) ? [] : wrong('an Instant');
    case 'date':
      return typeof value === 'string' && LOCAL_DATE.test(value) ? [] : wrong('a LocalDate');
    case 'json':
      return [];
  }
  if ('enum' in kind) return typeof value === 'string' && kind.enum.includes(value) ? [] : wrong(`one of ${kind.enum.join('|')}`);
  if ('optional' in kind) return decodeKind(kind.optional, value, path);
  if ('list' in kind) return Array.isArray(value) ? value.flatMap((v, i) => decodeKind(kind.list, v, `${path}[${i}]`)) : wrong('a list');
  if ('map' in kind) return isObject(value) ? Object.entries(value).flatMap(([k, v]) => decodeKind(kind.map, v, `${path}.${k}`)) : wrong('an object');
  return decodeErrors(kind.dto, value, path);
}

/**
 * Komga's OpenAPI document with every property that is not `required` made nullable: springdoc leaves Kotlin's `?`
 * out of the document, while Komga serializes those properties as `null` (which strict clients depend on).
 */
export function komgaOpenApi(): { components: { schemas: Record<string, unknown> }; paths: Record<string, unknown> } {
  const spec = JSON.parse(readFileSync(conformancePath('komga', 'komga-openapi.json'), 'utf8')) as { components: { schemas: Record<string, unknown> }; paths: Record<string, unknown> };
  for (const schema of Object.values(spec.components.schemas)) {
    if (!isObject(schema) || !isObject(schema.properties)) continue;
    const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
    for (const [key, property] of Object.entries(schema.properties)) if (!required.has(key)) schema.properties[key] = { anyOf: [property, { type: 'null' }] };
  }
  return spec;
}

/** An Ajv validator over that document's component schemas: the errors of `body` as `name`. */
export function openApiValidator(): (name: string, body: unknown) => string[] {
  const spec = komgaOpenApi();
  const ajv = new Ajv2020.default({ strict: false, allErrors: true, validateSchema: false });
  ajvFormats.default(ajv);
  ajv.addSchema({ $id: 'komga.json', components: spec.components, paths: spec.paths });
  return (name, body) => {
    const validate = ajv.getSchema(`komga.json#/components/schemas/${name}`) ?? ajv.compile({ $ref: `komga.json#/components/schemas/${name}` });
    return validate(body) ? [] : (validate.errors ?? []).map((e: ErrorObject) => `${name}${e.instancePath} ${e.message}`);
  };
}

// The JSON settings objects of Grimmory's AppSettings, property by property.
import { bool, int, listOf, nullableBool, nullableInt, object, oneOf, str, type Shape } from './shape.ts';

/** Grimmory's MetadataProvider values plus Bindery's `OpenLibrary` (see src/core/metadata/provider.ts). */
export const METADATA_PROVIDERS = ['Amazon', 'GoodReads', 'Google', 'Hardcover', 'Comicvine', 'Douban', 'Lubimyczytac', 'Ranobedb', 'Audible', 'OpenLibrary'] as const;
export const REPLACE_MODES = ['REPLACE_ALL', 'REPLACE_MISSING', 'REPLACE_WHEN_PROVIDED'] as const;

/** Metadata fields a refresh can fetch, in Grimmory's declaration order. */
export const REFRESH_FIELDS = [
  'title', 'subtitle', 'description', 'authors', 'publisher', 'publishedDate', 'seriesName', 'seriesNumber', 'seriesTotal',
  'isbn13', 'isbn10', 'language', 'categories', 'cover', 'pageCount', 'asin', 'goodreadsId', 'comicvineId', 'hardcoverId',
  'hardcoverBookId', 'googleId', 'lubimyczytacId', 'amazonRating', 'amazonReviewCount', 'goodreadsRating', 'goodreadsReviewCount',
  'hardcoverRating', 'hardcoverReviewCount', 'lubimyczytacRating', 'ranobedbId', 'ranobedbRating', 'audibleId', 'audibleRating',
  'audibleReviewCount', 'moods', 'tags',
] as const;

const provider = oneOf(METADATA_PROVIDERS);
const fieldProvider = object({ p1: provider, p2: provider, p3: provider, p4: provider });
const fields = <T>(make: () => T): Record<string, T> => Object.fromEntries(REFRESH_FIELDS.map((f) => [f, make()]));

export const MetadataRefreshOptionsShape: Shape = object({
  libraryId: nullableInt,
  refreshCovers: bool(),
  mergeCategories: bool(),
  reviewBeforeApply: nullableBool,
  replaceMode: oneOf(REPLACE_MODES, 'REPLACE_MISSING'),
  fieldOptions: object(fields(() => fieldProvider), { missing: 'instance' }),
  enabledFields: object(fields(() => bool(true, true)), { missing: 'instance' }),
});

export const MetadataProviderSettingsShape: Shape = object({
  amazon: object({ enabled: bool(), cookie: str, domain: str }),
  google: object({ enabled: bool(), language: str, apiKey: str }),
  goodReads: object({ enabled: bool() }),
  hardcover: object({ enabled: bool(), apiKey: str }),
  comicvine: object({ enabled: bool(), apiKey: str }),
  ranobedb: object({ enabled: bool() }),
  douban: object({ enabled: bool() }),
  lubimyczytac: object({ enabled: bool() }),
  audible: object({ enabled: bool(), domain: str }),
  openLibrary: object({ enabled: bool() }),
});

export const MATCH_WEIGHT_DEFAULTS = {
  title: 10, subtitle: 1, description: 10, authors: 10, publisher: 5, publishedDate: 3, seriesName: 2, seriesNumber: 2, seriesTotal: 1,
  isbn13: 3, isbn10: 5, language: 2, pageCount: 1, categories: 10, amazonRating: 3, amazonReviewCount: 2, goodreadsRating: 4,
  goodreadsReviewCount: 2, hardcoverRating: 2, hardcoverReviewCount: 1, doubanRating: 3, doubanReviewCount: 2, ranobedbRating: 2,
  lubimyczytacRating: 2, audibleRating: 0, audibleReviewCount: 0, coverImage: 5,
} as const;

export const MetadataMatchWeightsShape: Shape = object(Object.fromEntries(Object.entries(MATCH_WEIGHT_DEFAULTS).map(([k, v]) => [k, int(v, true)])));

const formatSettings = object({ enabled: bool(), maxFileSizeInMb: int() });

export const MetadataPersistenceSettingsShape: Shape = object({
  saveToOriginalFile: object(
    { epub: formatSettings, pdf: formatSettings, cbx: formatSettings, audiobook: formatSettings },
    {
      computed: (v) => ({
        anyFormatEnabled: ['epub', 'pdf', 'cbx', 'audiobook'].some((f) => (v[f] as { enabled?: boolean } | null)?.enabled === true),
      }),
    },
  ),
  convertCbrCb7ToCbz: bool(),
  moveFilesToLibraryPattern: bool(),
  sidecarSettings: object({ enabled: bool(), writeOnUpdate: bool(), writeOnScan: bool(), includeCoverFile: bool() }),
});

export const MetadataPublicReviewsSettingsShape: Shape = object({
  downloadEnabled: bool(),
  autoDownloadEnabled: bool(),
  providers: listOf(object({ provider, enabled: bool(), maxReviews: int() })),
});

export const KoboSettingsShape: Shape = object({
  convertToKepub: bool(true, true),
  conversionLimitInMb: int(100, true),
  convertCbxToEpub: bool(false, true),
  conversionLimitInMbForCbx: int(100, true),
  forceEnableHyphenation: bool(false, true),
  conversionImageCompressionPercentage: int(85, true),
  forwardToKoboStore: bool(true, true),
});

export const CoverCroppingSettingsShape: Shape = object({
  verticalCroppingEnabled: bool(),
  horizontalCroppingEnabled: bool(),
  aspectRatioThreshold: { kind: 'double' },
  smartCroppingEnabled: bool(),
});

export const PROVIDER_SPECIFIC_FIELDS = [
  'asin', 'amazonRating', 'amazonReviewCount', 'googleId', 'goodreadsId', 'goodreadsRating', 'goodreadsReviewCount', 'hardcoverId',
  'hardcoverBookId', 'hardcoverRating', 'hardcoverReviewCount', 'comicvineId', 'lubimyczytacId', 'lubimyczytacRating', 'ranobedbId',
  'ranobedbRating', 'audibleId', 'audibleRating', 'audibleReviewCount',
] as const;

export const MetadataProviderSpecificFieldsShape: Shape = object(Object.fromEntries(PROVIDER_SPECIFIC_FIELDS.map((f) => [f, nullableBool])));

export const OidcProviderDetailsShape: Shape = object({
  providerName: str,
  clientId: str,
  clientSecret: str,
  issuerUri: str,
  scopes: str,
  claimMapping: object({ username: str, name: str, email: str, groups: str }),
});

export const OidcAutoProvisionDetailsShape: Shape = object({
  enableAutoProvisioning: bool(),
  allowLocalAccountLinking: bool(true),
  defaultPermissions: listOf(str),
  defaultLibraryIds: listOf(nullableInt),
});

export const SidebarSortOptionShape: Shape = object({ field: str, order: str });

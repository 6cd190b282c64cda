// The Resources map a device reads at /v1/initialization: Kobo's store endpoints, with those this server answers
// pointed back at it (absolute URLs under /api/kobo/<token>).
import storeResources from './store-resources.json' with { type: 'json' };

type Resources = Record<string, unknown>;

/** Resource keys this server serves, and their paths under `/api/kobo/<token>`. */
const OWN_RESOURCES: Readonly<Record<string, string>> = {
  delete_entitlement: '/v1/library/{Ids}',
  get_tests_request: '/v1/analytics/gettests',
  library_book: '/v1/user/library/books/{LibraryItemId}',
  library_metadata: '/v1/library/{Ids}/metadata',
  library_search: '/v1/library/search',
  library_sync: '/v1/library/sync',
  post_analytics_event: '/v1/analytics/event',
  reading_state: '/v1/library/{Ids}/state',
  user_profile: '/v1/user/profile',
  user_ratings: '/v1/products/{ProductId}/rating/{Rating}',
  deals: '/v1/deals',
};

/** The store's map as Kobo serves it (a copy each time: callers change it). */
export function bundledResources(): Resources {
  return structuredClone(storeResources) as Resources;
}

/**
 * `base`'s resources with this server's own: `serverRoot` is scheme://host[:port] (the image host), `koboBase` the
 * absolute URL of /api/kobo/<token>.
 */
export function withOwnResources(base: Resources, serverRoot: string, koboBase: string): Resources {
  const out: Resources = { ...base };
  for (const [key, path] of Object.entries(OWN_RESOURCES)) out[key] = `${koboBase}${path}`;
  out.image_host = serverRoot;
  out.image_url_template = `${koboBase}/v1/books/{ImageId}/thumbnail/{Width}/{Height}/false/image.jpg`;
  out.image_url_quality_template = `${koboBase}/v1/books/{ImageId}/thumbnail/{Width}/{Height}/{Quality}/{IsGreyscale}/image.jpg`;
  return out;
}

// Credentials inside the settings that only administrators get to read back.
type Json = Record<string, unknown>;

/** Paths (from the AppSettings root) of values that are credentials. */
export const SECRET_PATHS: readonly (readonly string[])[] = [
  ['oidcProviderDetails', 'clientSecret'],
  ['metadataProviderSettings', 'amazon', 'cookie'],
  ['metadataProviderSettings', 'google', 'apiKey'],
  ['metadataProviderSettings', 'hardcover', 'apiKey'],
  ['metadataProviderSettings', 'comicvine', 'apiKey'],
];

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A copy of the settings with every credential set to null. */
export function withoutSecrets<T extends Json>(settings: T): T {
  const copy = structuredClone(settings);
  for (const path of SECRET_PATHS) {
    let node: unknown = copy;
    for (const step of path.slice(0, -1)) node = isObject(node) ? node[step] : undefined;
    const last = path.at(-1);
    if (isObject(node) && last !== undefined && last in node) node[last] = null;
  }
  return copy;
}

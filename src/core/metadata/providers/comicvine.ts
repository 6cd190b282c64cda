// Comic Vine (https://comicvine.gamespot.com/api/documentation): JSON with `format=json` and the user's `api_key`.
// Comic Vine has no ISBN search; titles go through `/search/?resources=issue,volume`, details through
// `/issue/4000-{id}/` and `/volume/4050-{id}/`. Ids are kept as Grimmory keeps them: `4000-123` (issue), `4050-45` (volume).
import { ProviderError, providerChanged, type CandidateComic, type MetadataCandidate, type MetadataProvider, type ProviderContext, type ProviderQuery } from '../provider.ts';
import { asArray, asInt, asNumber, asString, compact, htmlToText, httpsUrl, isObject, parseLooseDate, uniqueStrings, type Json } from '../values.ts';

const NAME = 'Comic Vine';
const ISSUE = '4000';
const VOLUME = '4050';
const ISSUE_FIELDS = 'id,name,issue_number,volume,cover_date,store_date,description,deck,image,site_detail_url,person_credits,character_credits,team_credits,location_credits,story_arc_credits,resource_type';
const VOLUME_FIELDS = 'id,name,publisher,start_year,count_of_issues,description,deck,image,site_detail_url,resource_type';

function image(raw: unknown): string | undefined {
  if (!isObject(raw)) return undefined;
  return httpsUrl(raw.original_url) ?? httpsUrl(raw.super_url) ?? httpsUrl(raw.medium_url);
}

function names(raw: unknown): string[] {
  return uniqueStrings(asArray(raw).map((c) => (isObject(c) ? asString(c.name) : undefined)).filter((n): n is string => n !== undefined));
}

/** `person_credits: [{ name, role: "writer, penciler" }]` → the people whose role mentions any fragment. */
function byRole(credits: unknown, fragments: readonly string[]): string[] {
  return names(asArray(credits).filter((c) => isObject(c) && fragments.some((f) => (asString(c.role) ?? '').toLowerCase().includes(f))));
}

function comicOf(issue: Json, volumeName: string | undefined): CandidateComic {
  const credits = issue.person_credits;
  const arcs = names(issue.story_arc_credits);
  return compact<CandidateComic>({
    issueNumber: asString(issue.issue_number),
    volumeName,
    storyArc: arcs[0],
    pencillers: byRole(credits, ['pencil', 'artist']),
    inkers: byRole(credits, ['ink']),
    colorists: byRole(credits, ['color']),
    letterers: byRole(credits, ['letter']),
    coverArtists: byRole(credits, ['cover']),
    editors: byRole(credits, ['editor']),
    characters: names(issue.character_credits),
    teams: names(issue.team_credits),
    locations: names(issue.location_credits),
    webLink: httpsUrl(issue.site_detail_url),
  });
}

/** An issue record → a candidate titled like Grimmory does: `Volume #N` or `Volume #N: Name`. */
export function parseComicvineIssue(issue: unknown, volume?: Json): MetadataCandidate | undefined {
  if (!isObject(issue)) return undefined;
  const id = asString(issue.id);
  if (!id) return undefined;
  const volumeName = isObject(issue.volume) ? asString(issue.volume.name) : undefined;
  const number = asString(issue.issue_number);
  const name = asString(issue.name);
  const title = volumeName ? `${volumeName}${number ? ` #${number}` : ''}${name ? `: ${name}` : ''}` : name;
  if (!title) return undefined;
  const comic = comicOf(issue, volumeName);
  return compact<MetadataCandidate>({
    provider: 'Comicvine',
    providerItemId: `${ISSUE}-${id}`,
    comicvineId: `${ISSUE}-${id}`,
    title,
    authors: byRole(issue.person_credits, ['writer', 'script', 'story', 'plot']),
    description: htmlToText(issue.description) ?? htmlToText(issue.deck),
    seriesName: volumeName,
    seriesNumber: asNumber(number),
    seriesTotal: volume ? asInt(volume.count_of_issues) : undefined,
    publisher: volume && isObject(volume.publisher) ? asString(volume.publisher.name) : undefined,
    publishedDate: parseLooseDate(issue.store_date) ?? parseLooseDate(issue.cover_date),
    thumbnailUrl: image(issue.image),
    externalUrl: httpsUrl(issue.site_detail_url),
    comicMetadata: Object.keys(comic).length > 0 ? comic : undefined,
  });
}

export function parseComicvineVolume(volume: unknown): MetadataCandidate | undefined {
  if (!isObject(volume)) return undefined;
  const id = asString(volume.id);
  const name = asString(volume.name);
  if (!id || !name) return undefined;
  const year = asInt(volume.start_year);
  return compact<MetadataCandidate>({
    provider: 'Comicvine',
    providerItemId: `${VOLUME}-${id}`,
    comicvineId: `${VOLUME}-${id}`,
    title: name,
    seriesName: name,
    seriesTotal: asInt(volume.count_of_issues),
    publisher: isObject(volume.publisher) ? asString(volume.publisher.name) : undefined,
    publishedDate: year ? `${year}-01-01` : undefined,
    description: htmlToText(volume.description) ?? htmlToText(volume.deck),
    thumbnailUrl: image(volume.image),
    externalUrl: httpsUrl(volume.site_detail_url),
  });
}

/** The `results` of an answer, after Comic Vine's own status codes (it answers HTTP 200 for most failures). */
export function comicvineResults(body: unknown): unknown {
  if (!isObject(body)) throw providerChanged(NAME, 'the answer is not an object');
  const status = asInt(body.status_code);
  const error = asString(body.error) ?? 'unknown error';
  if (status === 1) return body.results;
  if (status === 100) throw new ProviderError(NAME, 'NOT_CONFIGURED', `refused the API key (${error}); check "apiKey" in the metadata provider settings`);
  if (status === 101) throw new ProviderError(NAME, 'NOT_FOUND', `has no such item (${error})`);
  if (status === 107) throw new ProviderError(NAME, 'RATE_LIMITED', `asked to slow down (${error})`);
  if (status === undefined) throw providerChanged(NAME, 'no "status_code" in the answer');
  throw new ProviderError(NAME, 'UNAVAILABLE', `answered status ${status}: ${error}`);
}

function apiKey(ctx: ProviderContext): string {
  const key = asString(ctx.settings.apiKey);
  if (!key) throw new ProviderError(NAME, 'NOT_CONFIGURED', 'needs "apiKey" in the metadata provider settings');
  return key;
}

/** "Saga #12", "Saga 12", "Saga Vol. 2 #12" → the issue number, when the query has none. */
function issueNumberFrom(title: string): string | undefined {
  return /#\s*(\d+(?:\.\d+)?)\s*$/.exec(title)?.[1] ?? /\s(\d{1,4})\s*$/.exec(title)?.[1];
}

export const comicvineProvider: MetadataProvider = {
  id: 'Comicvine',
  settingsKey: 'comicvine',
  displayName: NAME,
  defaultBaseUrl: () => 'https://comicvine.gamespot.com/api',
  // Comic Vine allows 200 requests per resource an hour and blocks bursts ("velocity detection").
  minIntervalMs: 1000,
  timeoutMs: 20_000,
  requiredSettings: ['apiKey'],
  async search(query: ProviderQuery, ctx: ProviderContext): Promise<MetadataCandidate[]> {
    if (query.isbn || !query.title) return [];
    const limit = Math.min(Math.max(query.limit ?? 10, 1), 50);
    const wantedIssue = query.seriesNumber !== undefined ? String(query.seriesNumber) : issueNumberFrom(query.title);
    const text = query.seriesName ?? query.title;
    const body = await ctx.getJson('/search/', {
      query: { api_key: apiKey(ctx), format: 'json', resources: 'issue,volume', query: text, limit, field_list: `${ISSUE_FIELDS},${VOLUME_FIELDS}` },
    });
    const results = comicvineResults(body);
    if (!Array.isArray(results)) throw providerChanged(NAME, 'search "results" is not a list');
    const candidates = results
      .map((r) => (isObject(r) && r.resource_type === 'volume' ? parseComicvineVolume(r) : parseComicvineIssue(r)))
      .filter((c): c is MetadataCandidate => c !== undefined);
    // The issue asked for first, then the other issues, then whole volumes.
    const rank = (c: MetadataCandidate): number => (c.comicvineId?.startsWith(VOLUME) ? 2 : wantedIssue !== undefined && c.comicMetadata?.issueNumber === wantedIssue ? 0 : 1);
    return candidates.sort((a, b) => rank(a) - rank(b)).slice(0, limit);
  },
  async details(itemId: string, ctx: ProviderContext): Promise<MetadataCandidate | null> {
    const m = /^(?:(4000|4050)-)?(\d+)$/.exec(itemId.trim());
    if (!m) throw new ProviderError(NAME, 'NOT_FOUND', `"${itemId}" is not a Comic Vine issue (4000-…) or volume (4050-…) id`);
    const kind = m[1] ?? ISSUE;
    const key = apiKey(ctx);
    if (kind === VOLUME) {
      const volume = comicvineResults(await ctx.getJson(`/volume/${VOLUME}-${m[2]}/`, { query: { api_key: key, format: 'json', field_list: VOLUME_FIELDS } }));
      return parseComicvineVolume(volume) ?? null;
    }
    const issue = comicvineResults(await ctx.getJson(`/issue/${ISSUE}-${m[2]}/`, { query: { api_key: key, format: 'json', field_list: ISSUE_FIELDS } }));
    if (!isObject(issue)) return null;
    // The volume adds the publisher and the number of issues.
    const volumeId = isObject(issue.volume) ? asString(issue.volume.id) : undefined;
    let volume: Json | undefined;
    if (volumeId) {
      const v = comicvineResults(await ctx.getJson(`/volume/${VOLUME}-${volumeId}/`, { query: { api_key: key, format: 'json', field_list: VOLUME_FIELDS } }));
      if (isObject(v)) volume = v;
    }
    return parseComicvineIssue(issue, volume) ?? null;
  },
};

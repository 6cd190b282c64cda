// Douban Books (豆瓣读书) through its pages, its open API being closed to new keys: `/isbn/<isbn>/` redirects to the
// book's subject page; the search page (`search.douban.com/book/subject_search?search_text=`) carries its results as
// JSON in `window.__DATA__`; the subject page (`/subject/<id>/`) has the record in its `#info` block ("作者: …",
// "出版社: …", "ISBN: …" lines), the rating, the tags and the latest short reviews (短评).
import { ProviderError, providerChanged, type CandidateReview, type MetadataCandidate, type MetadataProvider, type ProviderContext, type ProviderQuery } from '../provider.ts';
import { asNumber, asString, cleanIsbn, compact, htmlToText, isObject, uniqueStrings } from '../values.ts';
import { isbnByRedirect, pageOrNull, withDetails } from './page-lookups.ts';
import { attrOf, blockedOrChanged, cleanText, countOf, dayInstant, decimalOf, embeddedJsonObject, languageOf, pageDate, parsePage, searchWords, textOf, type Page } from './page-parsing.ts';

const NAME = 'Douban';
const SITE = 'https://book.douban.com';
/** Douban serves its search from another host; a base URL override (a mirror, tests) serves both. */
const SEARCH_SITE = 'https://search.douban.com';
const DETAILED_RESULTS = 3;
const HEADERS = {
  'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/139.0.0.0 Safari/537.36',
  accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8',
  'accept-language': 'zh-CN,zh;q=0.9,en;q=0.8',
};
const SUBJECT = /\/subject\/(\d+)/;

/** "[美] 作者 / 出版社 / 2012-8 / 20.00元" → authors, publisher and date (the price and the rest dropped). */
function parseAbstract(text: string | undefined): { authors?: string[]; publisher?: string; publishedDate?: string } {
  const parts = (text ?? '').split(' / ').map((p) => p.trim()).filter(Boolean);
  if (parts.length >= 4) return compact({ authors: parts.slice(0, -3), publisher: parts.at(-3), publishedDate: pageDate(parts.at(-2)) });
  if (parts.length >= 1) return compact({ authors: [parts[0] as string], publisher: parts[1] });
  return {};
}

/** The search page → light candidates (title, authors, publisher, date, cover, rating). */
export function parseDoubanSearch(html: string, baseUrl = SITE): MetadataCandidate[] {
  const root = parsePage(html);
  const script = root.querySelectorAll('script').find((s) => s.rawText.includes('window.__DATA__'));
  if (!script) throw blockedOrChanged(NAME, html, 'the search page has no embedded results');
  const text = script.rawText;
  const data = embeddedJsonObject(text, text.indexOf('window.__DATA__'));
  if (!isObject(data) || !Array.isArray(data.items)) throw providerChanged(NAME, 'the embedded search results are not readable (Douban may now encrypt them)');
  const out: MetadataCandidate[] = [];
  for (const item of data.items) {
    if (!isObject(item)) continue;
    const id = SUBJECT.exec(asString(item.url) ?? '')?.[1];
    const title = asString(item.title);
    if (!id || !title) continue;
    const rating = isObject(item.rating) ? item.rating : {};
    const value = asNumber(rating.value);
    out.push(
      compact<MetadataCandidate>({
        provider: 'Douban',
        providerItemId: id,
        doubanId: id,
        title,
        ...parseAbstract(asString(item.abstract)),
        thumbnailUrl: asString(item.cover_url),
        doubanRating: value !== undefined && value > 0 ? value : undefined,
        doubanReviewCount: asNumber(rating.count),
        externalUrl: `${baseUrl}/subject/${id}/`,
      }),
    );
  }
  return out;
}

/** The `#info` block as label → value lines (its entries are separated by <br>), plus each line's links. */
function infoLines(info: Page): Map<string, { value: string; links: string[] }> {
  const lines = new Map<string, { value: string; links: string[] }>();
  for (const part of info.innerHTML.split(/<br\s*\/?>/i)) {
    const fragment = parsePage(part);
    const text = textOf(fragment);
    const m = text ? /^([^:：]+?)\s*[:：]\s*(.*)$/.exec(text) : null;
    if (!m?.[1]) continue;
    const links = fragment.querySelectorAll('a').map((a) => textOf(a)).filter((t): t is string => t !== undefined);
    lines.set(m[1].trim(), { value: (m[2] ?? '').trim(), links });
  }
  return lines;
}

/** Names as Douban prints them: "[美] Name", several joined by " / ". */
function people(entry: { value: string; links: string[] } | undefined): string[] {
  if (!entry) return [];
  const raw = entry.links.length > 0 ? entry.links : entry.value.split('/');
  return raw.map((n) => cleanText(n)).filter((n): n is string => n !== undefined);
}

export function parseDoubanReviews(root: Page): CandidateReview[] {
  const reviews: CandidateReview[] = [];
  for (const item of root.querySelectorAll('#comments .comment-item')) {
    const body = textOf(item.querySelector('.comment-content'));
    if (!body) continue;
    const stars = /allstar(\d+)/.exec(item.querySelector('.comment-info .rating, .comment-info [class*="allstar"]')?.getAttribute('class') ?? '')?.[1];
    reviews.push(
      compact<CandidateReview>({
        metadataProvider: 'Douban',
        reviewerName: textOf(item.querySelector('.comment-info a')),
        // allstar50 = five stars.
        rating: stars ? Number(stars) / 10 : undefined,
        date: dayInstant(pageDate(textOf(item.querySelector('.comment-time')))),
        body,
      }),
    );
  }
  return reviews;
}

export function parseDoubanSubject(html: string, id: string, baseUrl = SITE): MetadataCandidate {
  const root = parsePage(html);
  const title = textOf(root.querySelector('#wrapper h1 [property="v:itemreviewed"]') ?? root.querySelector('#wrapper h1'));
  const info = root.querySelector('#info');
  if (!title || !info) throw blockedOrChanged(NAME, html, 'the book page has no title or #info block');
  const lines = infoLines(info);
  const isbn = cleanIsbn(lines.get('ISBN')?.value);
  const intros = root.querySelectorAll('#link-report .intro');
  // The long introduction, when the page has one, sits in a hidden `.all` span after the short one.
  const intro = root.querySelector('#link-report .all .intro') ?? intros[0];
  const rating = decimalOf(textOf(root.querySelector('#interest_sectl .rating_num')));
  const tags = root.querySelectorAll('#db-tags-section a.tag, #db-tags-section .indent a').map((a) => textOf(a)).filter((t): t is string => t !== undefined);
  return compact<MetadataCandidate>({
    provider: 'Douban',
    providerItemId: id,
    doubanId: id,
    title,
    subtitle: lines.get('副标题')?.value || undefined,
    authors: uniqueStrings([...people(lines.get('作者')), ...people(lines.get('译者'))]),
    publisher: (lines.get('出版社')?.links[0] ?? lines.get('出版社')?.value) || undefined,
    publishedDate: pageDate(lines.get('出版年')?.value),
    pageCount: countOf(lines.get('页数')?.value),
    seriesName: (lines.get('丛书')?.links[0] ?? lines.get('丛书')?.value) || undefined,
    isbn13: isbn?.length === 13 ? isbn : undefined,
    isbn10: isbn?.length === 10 ? isbn : undefined,
    language: languageOf(lines.get('语言')?.value),
    description: htmlToText(intro?.innerHTML),
    categories: uniqueStrings(tags),
    thumbnailUrl: attrOf(root.querySelector('#mainpic a.nbg') ?? root.querySelector('#mainpic a'), 'href') ?? attrOf(root.querySelector('#mainpic img'), 'src'),
    doubanRating: rating !== undefined && rating > 0 ? rating : undefined,
    doubanReviewCount: countOf(textOf(root.querySelector('#interest_sectl .rating_people span'))),
    externalUrl: `${baseUrl}/subject/${id}/`,
    bookReviews: parseDoubanReviews(root),
  });
}

async function details(itemId: string, ctx: ProviderContext): Promise<MetadataCandidate | null> {
  const id = /(\d+)/.exec(itemId)?.[1];
  if (!id) throw new ProviderError(NAME, 'NOT_FOUND', `"${itemId}" is not a Douban subject id`);
  return pageOrNull(async () => parseDoubanSubject(await ctx.getText(`/subject/${id}/`, { headers: HEADERS }), id, ctx.baseUrl));
}

function byIsbn(isbn: string, ctx: ProviderContext): Promise<MetadataCandidate[]> {
  return isbnByRedirect(ctx, NAME, { path: `/isbn/${isbn}/`, headers: HEADERS, bookPath: SUBJECT }, (html, id) => parseDoubanSubject(html, id, ctx.baseUrl));
}

export const doubanProvider: MetadataProvider = {
  id: 'Douban',
  settingsKey: 'douban',
  displayName: NAME,
  defaultBaseUrl: () => SITE,
  // Douban blocks addresses that ask quickly; two seconds between pages keeps a library refresh under its radar.
  minIntervalMs: 2000,
  timeoutMs: 15_000,
  async search(query: ProviderQuery, ctx: ProviderContext): Promise<MetadataCandidate[]> {
    const known = query.knownIds?.doubanId;
    if (known) {
      const record = await details(known, ctx);
      if (record) return [record];
    }
    const isbn = cleanIsbn(query.isbn);
    if (isbn) return byIsbn(isbn, ctx);
    const term = searchWords(query.title, query.author);
    if (!term) return [];
    const limit = Math.min(Math.max(query.limit ?? 10, 1), 15);
    const searchBase = ctx.baseUrl === SITE ? SEARCH_SITE : ctx.baseUrl;
    const found = parseDoubanSearch(await ctx.getText(`${searchBase}/book/subject_search`, { query: { search_text: term, cat: 1001 }, headers: HEADERS }), ctx.baseUrl).slice(0, limit);
    return withDetails(found, DETAILED_RESULTS, async (light) => {
      const full = await details(light.providerItemId, ctx);
      // The search result's cover and rating fill what the page lacks.
      return full ? { ...light, ...full } : null;
    });
  },
  details,
};

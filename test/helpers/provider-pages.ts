// Small pages and API answers shaped like those of the scraped and JSON metadata providers (Amazon, Goodreads,
// Audible, Douban, Lubimyczytac, RanobeDB): the same element ids, classes, attributes and JSON keys the real ones
// carry, cut down to one or two items.

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

// ---------------------------------------------------------------- Amazon

export interface AmazonItem {
  asin: string;
  title: string;
  author: string;
  /** ASIN of the Paperback format link, when it differs from the item's own (the item is then the Kindle edition). */
  paperbackAsin?: string;
  rating?: string;
  ratings?: string;
}

export function amazonSearchPage(items: AmazonItem[], extra = ''): string {
  const cards = items
    .map(
      (item, i) => `
<div role="listitem" data-asin="${item.asin}" data-index="${i + 2}" data-uuid="u-${i}" data-component-type="s-search-result" class="sg-col-20-of-24 s-result-item s-asin">
 <div class="puis-card-container s-card-container">
  <span data-component-type="s-product-image"><a class="a-link-normal s-no-outline" href="/${encodeURIComponent(item.title)}/dp/${item.asin}/ref=sr_1_${i + 1}"><img class="s-image" src="https://m.media-amazon.com/images/I/71img${i}._AC_UY218_.jpg" srcset="https://m.media-amazon.com/images/I/71img${i}._AC_UY436_.jpg 2x" alt="${esc(item.title)}"></a></span>
  <div data-cy="title-recipe" class="a-section a-spacing-none puis-padding-right-small s-title-instructions-style">
   <a class="a-link-normal s-line-clamp-2 s-link-style a-text-normal" href="/${encodeURIComponent(item.title)}/dp/${item.asin}/ref=sr_1_${i + 1}"><h2 aria-label="${esc(item.title)}" class="a-size-medium a-spacing-none a-color-base a-text-normal"><span>${esc(item.title)}</span></h2></a>
   <div class="a-row a-size-base a-color-secondary"><span class="a-size-base">by </span><a class="a-size-base a-link-normal s-underline-text s-link-style" href="/${encodeURIComponent(item.author)}/e/B000ARC6K${i}?ref=sr_ntt_srch_lnk_${i + 1}">${esc(item.author)}</a><span class="a-size-base a-color-secondary a-text-normal"> | </span><span class="a-size-base a-color-secondary a-text-normal">Sep 18, 2012</span></div>
  </div>
  <div data-cy="reviews-block" class="a-section a-spacing-none a-spacing-top-micro"><span class="a-declarative"><a aria-label="${item.rating ?? '4.5'} out of 5 stars" href="javascript:void(0)" role="button"><i class="a-icon a-icon-star-small a-star-small-4-5"><span class="a-icon-alt">${item.rating ?? '4.5'} out of 5 stars</span></i></a></span><a aria-label="${item.ratings ?? '10'} ratings" class="a-link-normal s-underline-text" href="/dp/${item.asin}/ref=sr_1_${i + 1}#customerReviews"><span class="a-size-base s-underline-text">${item.ratings ?? '10'}</span></a></div>
  <div data-cy="price-recipe" class="a-section a-spacing-none a-spacing-top-small">
   <a class="a-size-base a-link-normal s-underline-text s-link-style a-text-bold" href="/${encodeURIComponent(item.title)}/dp/${item.paperbackAsin ?? item.asin}/ref=sr_1_${i + 1}">Paperback</a>
   <a class="a-size-base a-link-normal s-underline-text s-link-style a-text-bold" href="/${encodeURIComponent(item.title)}-ebook/dp/B00KINDLE${i}/ref=sr_1_${i + 1}">Kindle</a>
  </div>
 </div>
</div>`,
    )
    .join('');
  return `<!doctype html><html lang="en-us" class="a-no-js"><head><meta charset="utf-8"><title>Amazon.com : books</title></head><body>
<div id="a-page"><div id="search"><div class="s-desktop-width-max s-desktop-content s-opposite-dir sg-row">
<span data-component-type="s-search-results" class="rush-component s-latency-cf-section"><div class="s-main-slot s-result-list s-search-results sg-row">
<div data-asin="" data-index="0" data-component-type="s-result-info-bar" class="s-result-item"><span>1-${items.length} of over 1,000 results</span></div>
${cards}
${extra}
</div></span></div></div></div></body></html>`;
}

export interface AmazonProduct {
  title: string;
  authors: { name: string; role?: string }[];
  isbn13?: string;
  isbn10?: string;
  publisherLine?: string;
  publicationDate?: string;
  pages?: string;
  language?: string;
  series?: { name: string; label: string };
  rating?: string;
  ratings?: string;
  image?: string;
  description?: string;
  categories?: string[];
  reviews?: { name: string; title: string; stars: string; dateLine: string; body: string }[];
}

export function amazonProductPage(p: AmazonProduct): string {
  const rpi = (id: string, label: string, value: string, link = false): string =>
    `<li class="a-carousel-card"><div id="rpi-attribute-${id}" class="a-section a-spacing-none a-text-center rpi-attribute-content"><div class="a-section a-spacing-small a-padding-small rpi-attribute-label"><span>${esc(label)}</span></div><div class="a-section a-spacing-none a-spacing-top-micro rpi-icon"></div><div class="a-section a-spacing-none a-spacing-top-micro rpi-attribute-value">${link ? `<a class="a-link-normal" href="/dp/B0SERIES"><span>${esc(value)}</span></a>` : `<span>${esc(value)}</span>`}</div></div></li>`;
  const bullet = (label: string, value: string): string => `<li><span class="a-list-item"><span class="a-text-bold">${esc(label)} &rlm; : &lrm;</span><span>${esc(value)}</span></span></li>`;
  const reviews = (p.reviews ?? [])
    .map(
      (r, i) => `<li id="R${i}" data-hook="review" class="review aok-relative"><div class="a-section celwidget"><div data-hook="genome-widget" class="a-profile-content"><span class="a-profile-name">${esc(r.name)}</span></div>
<div class="a-row"><a data-hook="review-title" class="a-size-base a-link-normal review-title a-color-base review-title-content a-text-bold" href="/gp/customer-reviews/R${i}"><i data-hook="review-star-rating" class="a-icon a-icon-star a-star-5 review-rating"><span class="a-icon-alt">${esc(r.stars)}</span></i><span class="a-letter-space"></span><span>${esc(r.title)}</span></a></div>
<span data-hook="review-date" class="a-size-base a-color-secondary review-date">${esc(r.dateLine)}</span>
<div class="a-row a-spacing-small review-data"><span data-hook="review-body" class="a-size-base review-text"><div data-a-expander-name="review_text_read_more" class="a-expander-collapsed-height a-row a-expander-container"><div data-hook="review-collapsed" class="a-expander-content reviewText review-text-content a-expander-partial-collapse-content"><span>${esc(r.body)}</span></div><div class="a-expander-header a-expander-partial-collapse-header"><a href="javascript:void(0)" class="a-declarative"><span class="a-expander-prompt">Read more</span></a></div></div></span></div></div></li>`,
    )
    .join('');
  return `<!doctype html><html lang="en-us"><head><meta charset="utf-8"><title>${esc(p.title)}: Amazon.com: Books</title></head><body>
<div id="dp" class="book en_US"><div id="dp-container">
<div id="leftCol"><div id="imageBlock_feature_div"><div id="main-image-container"><img alt="${esc(p.title)}" src="${p.image ?? 'https://m.media-amazon.com/images/I/81cover._SY466_.jpg'}" data-old-hires="" id="landingImage" data-a-dynamic-image="{&quot;https://m.media-amazon.com/images/I/81cover._SY342_.jpg&quot;:[229,342],&quot;${p.image ?? 'https://m.media-amazon.com/images/I/81cover._SY466_.jpg'}&quot;:[312,466]}"></div></div></div>
<div id="centerCol">
 <div id="booksTitle"><div class="a-section a-spacing-none"><h1 id="title" class="a-size-large a-text-ellipsis"><span id="productTitle" class="a-size-extra-large celwidget">${esc(p.title)}</span><span id="productBinding" class="a-size-large a-color-secondary celwidget">Paperback</span></h1></div>
 <div id="bylineInfo_feature_div"><div id="bylineInfo" class="a-section a-spacing-micro bylineHidden feature">${p.authors
   .map((a) => `<span class="author notFaded" data-width=""><a class="a-link-normal" href="/${encodeURIComponent(a.name)}/e/B000AUTHOR">${esc(a.name)}</a><span class="contribution" spacing="none"><span class="a-color-secondary">(${esc(a.role ?? 'Author')})</span></span></span>`)
   .join('<span class="a-color-secondary">, </span>')}</div></div></div>
 <div id="averageCustomerReviews_feature_div"><div id="averageCustomerReviews"><span class="a-declarative"><span id="acrPopover" class="reviewCountTextLinkedHistogram noUnderline" title="${p.rating ?? '4.7'} out of 5 stars"><span class="a-declarative"><a href="javascript:void(0)" role="button" class="a-popover-trigger a-declarative"><span aria-hidden="true" class="a-size-base a-color-base">${p.rating ?? '4.7'}</span></a></span></span></span><span class="a-letter-space"></span><a id="acrCustomerReviewLink" class="a-link-normal" href="#customerReviews"><span id="acrCustomerReviewText" aria-label="${p.ratings ?? '1,234'} Reviews" class="a-size-base">${p.ratings ?? '1,234'} ratings</span></a></div></div>
 <div id="bookDescription_feature_div" data-feature-name="bookDescription" class="celwidget"><div data-a-expander-name="book_description_expander" data-a-expander-collapsed-height="200" class="a-expander-collapsed-height a-row a-expander-container a-expander-partial-collapse-container"><div aria-expanded="false" class="a-expander-content a-expander-partial-collapse-content">${p.description ?? ''}</div></div></div>
</div>
<div id="rich_product_information"><ol class="a-carousel">
${p.series ? rpi('book_details-series', p.series.label, p.series.name, true) : ''}
${p.pages ? rpi('book_details-fiona_pages', 'Print length', p.pages) : ''}
${p.language ? rpi('language', 'Language', p.language) : ''}
${p.publicationDate ? rpi('book_details-publication_date', 'Publication date', p.publicationDate) : ''}
${p.isbn10 ? rpi('book_details-isbn10', 'ISBN-10', p.isbn10) : ''}
${p.isbn13 ? rpi('book_details-isbn13', 'ISBN-13', p.isbn13) : ''}
</ol></div>
<div id="detailBulletsWrapper_feature_div"><div id="detailBullets_feature_div"><ul class="a-unordered-list a-nostyle a-vertical a-spacing-none detail-bullet-list">
${p.publisherLine ? bullet('Publisher', p.publisherLine) : ''}
${p.language ? bullet('Language', p.language) : ''}
${p.isbn10 ? bullet('ISBN-10', p.isbn10) : ''}
</ul></div>
<ul class="a-unordered-list a-nostyle a-vertical zg_hrsr">${(p.categories ?? []).map((c, i) => `<li><span class="a-list-item">#${i + 1} in <a href="/gp/bestsellers/books/${i}">${esc(c)} (Books)</a></span></li>`).join('')}</ul></div>
<div id="cm-cr-dp-review-list" class="a-section review-views celwidget"><ul>${reviews}</ul></div>
</div></div></body></html>`;
}

/** Amazon's robot check, as served (with status 200 or 503) to automated clients. */
export function amazonCaptchaPage(): string {
  return `<!doctype html><html lang="en"><head><title dir="ltr">Amazon.com</title></head><body><div class="a-container a-padding-double-large">
<div class="a-row a-spacing-double-large"><h4>Enter the characters you see below</h4><p class="a-last">Sorry, we just need to make sure you're not a robot. For best results, please make sure your browser is accepting cookies.</p></div>
<form method="get" action="/errors/validateCaptcha" name=""><input type=hidden name="amzn" value="abc"><img src="https://images-na.ssl-images-amazon.com/captcha/xyz/Captcha_abc.jpg"><input id="captchacharacters" name="field-keywords" type="text"></form>
</div></body></html>`;
}

// ---------------------------------------------------------------- Goodreads

export interface GoodreadsBook {
  legacyId: number;
  title: string;
  author: string;
  illustrator?: string;
  seriesTitle?: string;
  seriesPosition?: string;
  genres?: string[];
  isbn?: string;
  isbn13?: string;
  pages?: number;
  publicationTime?: number;
  publisher?: string;
  language?: string;
  averageRating?: number;
  ratingsCount?: number;
  description?: string;
  imageUrl?: string;
  reviews?: { name: string; text: string; rating: number; updatedAt: number; spoiler?: boolean; followers?: number; textReviews?: number }[];
}

export function goodreadsBookPage(b: GoodreadsBook): string {
  const bookKey = `Book:kca://book/amzn1.gr.book.v3.${b.legacyId}`;
  const workKey = `Work:kca://work/amzn1.gr.work.v1.${b.legacyId}`;
  const authorKey = 'Contributor:kca://author/amzn1.gr.author.v1.a1';
  const illustratorKey = 'Contributor:kca://author/amzn1.gr.author.v1.a2';
  const seriesKey = 'Series:kca://series/amzn1.gr.series.v1.s1';
  const state: Record<string, unknown> = {
    ROOT_QUERY: {
      __typename: 'Query',
      [`getBookByLegacyId({"legacyId":"${b.legacyId}"})`]: { __ref: bookKey },
    },
    [authorKey]: { __typename: 'Contributor', id: 'kca://author/amzn1.gr.author.v1.a1', legacyId: 656983, name: b.author, webUrl: 'https://www.goodreads.com/author/show/656983' },
    [workKey]: {
      __typename: 'Work',
      id: `kca://work/amzn1.gr.work.v1.${b.legacyId}`,
      legacyId: 1540236,
      stats: { __typename: 'BookOrWorkStats', averageRating: b.averageRating ?? 4.29, ratingsCount: b.ratingsCount ?? 4123456, textReviewsCount: 80123 },
      details: { __typename: 'WorkDetails', originalTitle: b.title, publicationTime: -1018713600000 },
    },
    [bookKey]: {
      __typename: 'Book',
      id: `kca://book/amzn1.gr.book.v3.${b.legacyId}`,
      legacyId: b.legacyId,
      webUrl: `https://www.goodreads.com/book/show/${b.legacyId}`,
      title: b.title,
      titleComplete: b.seriesTitle ? `${b.title} (${b.seriesTitle}, #${b.seriesPosition ?? '1'})` : b.title,
      description: b.description ?? '',
      'description({"stripped":true})': (b.description ?? '').replace(/<[^>]+>/g, ''),
      imageUrl: b.imageUrl ?? `https://images-na.ssl-images-amazon.com/images/S/compressed.photo.goodreads.com/books/1546071216i/${b.legacyId}.jpg`,
      bookGenres: (b.genres ?? []).map((name) => ({ __typename: 'BookGenre', genre: { __typename: 'Genre', name, webUrl: `https://www.goodreads.com/genres/${name.toLowerCase()}` } })),
      bookSeries: b.seriesTitle ? [{ __typename: 'BookSeries', userPosition: b.seriesPosition ?? '1', series: { __ref: seriesKey } }] : [],
      primaryContributorEdge: { __typename: 'BookContributorEdge', node: { __ref: authorKey }, role: 'Author' },
      secondaryContributorEdges: b.illustrator ? [{ __typename: 'BookContributorEdge', node: { __ref: illustratorKey }, role: 'Illustrator' }] : [],
      details: {
        __typename: 'BookDetails',
        asin: '',
        format: 'Paperback',
        numPages: b.pages ?? 366,
        publicationTime: b.publicationTime ?? 1189666800000,
        publisher: b.publisher ?? 'Houghton Mifflin Harcourt',
        isbn: b.isbn ?? null,
        isbn13: b.isbn13 ?? null,
        language: { __typename: 'Language', name: b.language ?? 'English' },
      },
      work: { __ref: workKey },
    },
  };
  if (b.illustrator) state[illustratorKey] = { __typename: 'Contributor', id: 'kca://author/amzn1.gr.author.v1.a2', name: b.illustrator };
  if (b.seriesTitle) state[seriesKey] = { __typename: 'Series', id: 'kca://series/amzn1.gr.series.v1.s1', title: b.seriesTitle, webUrl: 'https://www.goodreads.com/series/66175' };
  const edges: unknown[] = [];
  for (const [i, r] of (b.reviews ?? []).entries()) {
    const userKey = `User:kca://user/amzn1.gr.user.v1.u${i}`;
    const reviewKey = `Review:kca://review:goodreads/amzn1.gr.review:goodreads.v1.r${i}`;
    state[userKey] = { __typename: 'User', legacyId: 1000 + i, name: r.name, followersCount: r.followers ?? 10, textReviewsCount: r.textReviews ?? 5, isAuthor: false };
    state[reviewKey] = { __typename: 'Review', id: `kca://review/r${i}`, creator: { __ref: userKey }, createdAt: r.updatedAt - 1000, updatedAt: r.updatedAt, text: r.text, rating: r.rating, spoilerStatus: r.spoiler ?? false, likeCount: 3 };
    edges.push({ __typename: 'BookReviewsEdge', node: { __ref: reviewKey } });
  }
  (state.ROOT_QUERY as Record<string, unknown>)[`getReviews({"filters":{"resourceId":"${b.legacyId}","resourceType":"WORK"},"pagination":{"limit":30}})`] = { __typename: 'BookReviewsConnection', edges };
  const nextData = { props: { pageProps: { params: { book_id: String(b.legacyId) }, apolloState: state, jwtToken: null }, __N_SSP: true }, page: '/book/show/[book_id]', query: { book_id: String(b.legacyId) }, buildId: 'abc123', isFallback: false, gssp: true, scriptLoader: [] };
  return `<!DOCTYPE html><html lang="en"><head><meta charSet="utf-8"/><title>${esc(b.title)} by ${esc(b.author)} | Goodreads</title></head><body><div id="__next"><div class="PageFrame PageFrame--siteHeaderBanner"><main class="PageFrame__main"><div class="BookPage__mainContent"><h1 class="Text Text__title1" data-testid="bookTitle">${esc(b.title)}</h1></div></main></div></div><script id="__NEXT_DATA__" type="application/json">${JSON.stringify(nextData)}</script></body></html>`;
}

export function goodreadsAutocomplete(entries: { bookId: string; title: string; author: string; avgRating?: string; ratingsCount?: number }[]): unknown[] {
  return entries.map((e, i) => ({
    imageUrl: `https://i.gr-assets.com/images/S/compressed.photo.goodreads.com/books/1549260060i/${e.bookId}._SX50_.jpg`,
    bookId: e.bookId,
    workId: String(20000 + i),
    bookUrl: `/book/show/${e.bookId}-${e.title.toLowerCase().replace(/\W+/g, '-')}`,
    from_search: true,
    from_srp: true,
    qid: 'Gdu5vdYSS1',
    rank: i + 1,
    title: e.title,
    bookTitleBare: e.title,
    numPages: 240,
    avgRating: e.avgRating ?? '4.00',
    ratingsCount: e.ratingsCount ?? 1000,
    author: { id: 5735 + i, name: e.author, isGoodreadsAuthor: false, profileUrl: `https://www.goodreads.com/author/show/${5735 + i}`, worksListUrl: `https://www.goodreads.com/author/list/${5735 + i}` },
    kcrPreviewUrl: null,
    description: { html: 'A truncated blurb…', truncated: true, fullContentUrl: `https://www.goodreads.com/book/show/${e.bookId}` },
  }));
}

// ---------------------------------------------------------------- Audible

export interface AudibleProductInput {
  asin: string;
  title: string;
  subtitle?: string;
  authors: string[];
  narrators: string[];
  minutes?: number;
  series?: { title: string; sequence: string };
  contentType?: string;
  imageUrl?: string;
}

export function audibleProduct(p: AudibleProductInput): Record<string, unknown> {
  return {
    asin: p.asin,
    asset_details: [],
    authors: p.authors.map((name, i) => ({ asin: `B000AUTH${i}X`, name })),
    available_codecs: [{ enhanced_codec: 'LC_64_22050_stereo', format: 'Enhanced', is_kindle_enhanced: true, name: 'aax_22_64' }],
    category_ladders: [{ ladder: [{ id: '18580606011', name: 'Science Fiction & Fantasy' }, { id: '18580607011', name: 'Fantasy' }], root: 'Genres' }],
    content_delivery_type: 'MultiPartBook',
    content_type: p.contentType ?? 'Product',
    format_type: 'unabridged',
    is_adult_product: false,
    issue_date: '2021-09-16',
    language: 'english',
    merchandising_summary: 'A short summary.',
    narrators: p.narrators.map((name) => ({ name })),
    product_images: { '500': `https://m.media-amazon.com/images/I/${p.asin}._SL500_.jpg`, '1000': p.imageUrl ?? `https://m.media-amazon.com/images/I/${p.asin}._SL1000_.jpg` },
    publication_name: p.series?.title,
    publisher_name: 'Recorded Books',
    publisher_summary: '<p><b>Brand-new unabridged</b> recording.</p><p>Second paragraph.</p>',
    rating: {
      num_reviews: 2955,
      overall_distribution: { average_rating: 4.923878299988162, display_average_rating: '4.9', display_stars: 5.0, num_ratings: 25341 },
      performance_distribution: { average_rating: 4.94, display_average_rating: '4.9', display_stars: 5.0, num_ratings: 22567 },
    },
    release_date: '2021-09-16',
    runtime_length_min: p.minutes ?? 1358,
    series: p.series ? [{ asin: 'B009CFOEGK', sequence: p.series.sequence, title: p.series.title, url: '/pd/Series/B009CFOEGK' }] : [],
    sku: 'BK_RECO_016048',
    subtitle: p.subtitle,
    title: p.title,
  };
}

// ---------------------------------------------------------------- Douban

export interface DoubanItem {
  id: string;
  title: string;
  abstract: string;
  rating?: number;
}

export function doubanSearchPage(items: DoubanItem[]): string {
  const data = {
    count: items.length,
    error_info: '',
    items: [
      { id: 0, title: '相关作者', tpl_name: 'search_common', url: 'https://book.douban.com/author/4502174/' },
      ...items.map((it) => ({
        abstract: it.abstract,
        abstract_2: '',
        cover_url: `https://img1.doubanio.com/view/subject/m/public/s${it.id}.jpg`,
        id: Number(it.id),
        interest: null,
        label_actions: [],
        labels: [],
        more_url: '',
        rating: { count: 1000, rating_info: '', star_count: 4.5, value: it.rating ?? 9.1 },
        title: it.title,
        tpl_name: 'search_subject',
        url: `https://book.douban.com/subject/${it.id}/`,
      })),
    ],
    report: { qtype: '0', tags: 'book' },
    start: 0,
    text: 'search',
    total: items.length,
  };
  return `<!DOCTYPE html><html lang="zh-cmn-Hans"><head><meta charset="utf-8"><title>搜索 - 豆瓣读书</title></head><body><div id="wrapper"><div id="root"></div></div>
<script type="text/javascript">window.__DATA__ = ${JSON.stringify(data)};
window.__USER__ = {};</script></body></html>`;
}

export interface DoubanSubject {
  id: string;
  title: string;
  authors: string[];
  translator?: string;
  publisher?: string;
  subtitle?: string;
  year?: string;
  pages?: string;
  series?: string;
  isbn?: string;
  rating?: string;
  votes?: string;
  intro?: string;
  tags?: string[];
  comments?: { name: string; stars: number; time: string; text: string }[];
}

export function doubanSubjectPage(s: DoubanSubject): string {
  const info = [
    `<span><span class="pl"> 作者</span>:${s.authors.map((a) => `<a class="" href="/author/4502174">${esc(a)}</a>`).join(' / ')}</span><br/>`,
    s.publisher ? `<span class="pl">出版社:</span> <a href="https://book.douban.com/press/2582">${esc(s.publisher)}</a><br/>` : '',
    s.subtitle ? `<span class="pl">副标题:</span> ${esc(s.subtitle)}<br/>` : '',
    s.translator ? `<span><span class="pl"> 译者</span>: <a class="" href="/search/x">${esc(s.translator)}</a></span><br/>` : '',
    s.year ? `<span class="pl">出版年:</span> ${esc(s.year)}<br/>` : '',
    s.pages ? `<span class="pl">页数:</span> ${esc(s.pages)}<br/>` : '',
    '<span class="pl">定价:</span> 45.00元<br/>',
    '<span class="pl">装帧:</span> 平装<br/>',
    s.series ? `<span class="pl">丛书:</span>&nbsp;<a href="https://book.douban.com/series/1234">${esc(s.series)}</a><br>` : '',
    s.isbn ? `<span class="pl">ISBN:</span> ${esc(s.isbn)}<br/>` : '',
  ].join('\n');
  const comments = (s.comments ?? [])
    .map(
      (c, i) => `<li class="comment-item" id="${1000 + i}" data-cid="${1000 + i}"><div class="avatar"><a title="${esc(c.name)}" href="https://www.douban.com/people/u${i}/"><img src="https://img1.doubanio.com/icon/u${i}.jpg"></a></div>
<div class="comment"><h3><span class="comment-vote"><span id="c-${i}" class="vote-count">12</span></span><span class="comment-info"><a href="https://www.douban.com/people/u${i}/">${esc(c.name)}</a><span class="user-stars allstar${c.stars * 10} rating" title="推荐"></span><a class="comment-time" href="https://book.douban.com/comment/${1000 + i}">${esc(c.time)}</a></span></h3>
<p class="comment-content"><span class="short">${esc(c.text)}</span></p></div></li>`,
    )
    .join('');
  return `<!DOCTYPE html><html lang="zh-cmn-Hans" class="ua-linux"><head><meta charset="utf-8"><title>${esc(s.title)} (豆瓣)</title></head><body>
<div id="wrapper"><h1><span property="v:itemreviewed">${esc(s.title)}</span><div class="clear"></div></h1>
<div id="content"><div class="grid-16-8 clearfix"><div class="article"><div class="indent"><div class="subjectwrap clearfix"><div class="subject clearfix">
<div id="mainpic" class=""><a class="nbg" href="https://img1.doubanio.com/view/subject/l/public/s${s.id}.jpg" title="${esc(s.title)}"><img src="https://img1.doubanio.com/view/subject/s/public/s${s.id}.jpg" title="点击看更多图片" alt="${esc(s.title)}" rel="v:photo" style="max-width: 135px;max-height: 200px;"></a></div>
<div id="info" class="">
${info}
</div></div>
<div id="interest_sectl"><div class="rating_wrap clearbox" rel="v:rating"><div class="rating_logo">豆瓣评分</div><div class="rating_self clearfix" typeof="v:Rating"><strong class="ll rating_num " property="v:average"> ${s.rating ?? '9.4'} </strong><span property="v:best" content="10.0"></span><div class="rating_right "><div class="ll bigstar45"></div><div class="rating_sum"><span class=""><a href="comments" class="rating_people"><span property="v:votes">${s.votes ?? '792474'}</span>人评价</a></span></div></div></div></div></div>
</div></div>
<div class="related_info"><h2><span class="">内容简介</span></h2><div class="indent" id="link-report"><span class="short"><div class="intro"><p>${esc((s.intro ?? '').slice(0, 20))}…</p></div></span><span class="all hidden"><div class="intro">${(s.intro ?? '').split('\n').map((p) => `<p>${esc(p)}</p>`).join('')}</div></span></div>
<div id="db-tags-section" class="blank20"><h2><span class="">豆瓣成员常用的标签</span></h2><div class="indent"><span class="">${(s.tags ?? []).map((t) => `<a class="tag" href="/tag/${encodeURIComponent(t)}">${esc(t)}</a>`).join('</span><span class="">')}</span></div></div>
<div id="comments" class="comment-list new_score"><ul>${comments}</ul></div>
</div></div></div></div></div></body></html>`;
}

/** What Douban shows an address it suspects: the "abnormal request" page (sec.douban.com). */
export function doubanBlockedPage(): string {
  return `<!DOCTYPE html><html lang="zh-cmn-Hans"><head><meta charset="UTF-8"><title>豆瓣</title></head><body><div id="content"><p>检测到有异常请求从你的 IP 发出，请 <a href="https://www.douban.com/accounts/login">登录</a> 使用豆瓣。</p><form action="https://sec.douban.com/c" method="post"><input name="ck" type="hidden"></form></div></body></html>`;
}

// ---------------------------------------------------------------- Lubimyczytac

export function lubimyczytacSearchPage(cards: { id: string; title: string; author: string; rating?: string }[]): string {
  const list = cards
    .map(
      (c) => `<div class="book-card book-card--l " id="listBookElement${c.id}" data-book-id="${c.id}" data-promoofferv-ga-id=""><div class="book-card__primary"><div class="book-card__cover-wrapper"><form class="formToHref book-card__cover-link" action="/ksiazka/${c.id}/slug" method="post" rel="nofollow"><input class="btn--serie-save" type="submit" /><img class="book-card__cover-image" src="https://s.lubimyczytac.pl/upload/books/${c.id}/cover-170x243.jpg" alt="Okładka książki ${esc(c.title)} ${esc(c.author)}" loading="lazy" decoding="async" /></form></div>
<div class="book-card__info-box"><a class="book-card__title" title="${esc(c.title)}" href="/ksiazka/${c.id}/slug" data-promooffer-ga-id=""> ${esc(c.title)} </a><div class="book-card__author"><a href="https://lubimyczytac.pl/autor/30856/author">${esc(c.author)}</a></div><div class="book-card__detail book-card__detail--rating"><div class="rating rating--book-list"><i class="icon icon-star" aria-hidden="true"></i><span class="rating__avarage">${c.rating ?? '7,2'}</span><span class="rating__text"> &nbsp;<small>z</small> 8662 ocen </span></div></div></div></div></div>`,
    )
    .join('\n');
  return `<!DOCTYPE html><html lang="pl"><head><meta charset="UTF-8"><title>Szukaj - wyniki wyszukiwania | Lubimyczytać.pl</title></head><body>
<header><form class="searchbox" action="/szukaj/ksiazki" method="get"><input class="searchbox__input" type="text" autocomplete="off" name="phrase" /><button class="searchbox__button icon-search" aria-label="Szukaj">Szukaj</button></form></header>
<div class="promoted"><div class="book-card"><a class="book-card__title" href="/ksiazka/999999/promo">Reklama</a></div></div>
${cards.length > 0 ? `<div id="ksiazkiPaginator" class="js-ajax-filtered-list listFiltered-hld"><div id="ksiazki" class="js-ajax-filtered-list listFiltered-hld">${list}</div></div>` : '<div class="searcher__empty"><p>Nie znaleziono książek pasujących do zapytania.</p></div>'}
</body></html>`;
}

export interface LubimyczytacBook {
  id: string;
  title: string;
  authors: string[];
  isbn: string;
  date?: string;
  pages?: string;
  rating?: string;
  cykl?: string;
  publisher?: string;
  description?: string;
  tags?: string[];
  reviews?: { author: string; date: string; body: string; rating: string }[];
}

export function lubimyczytacBookPage(b: LubimyczytacBook): string {
  const ld = {
    '@context': 'http://schema.org',
    '@type': 'Book',
    name: b.title,
    isbn: b.isbn,
    datePublished: b.date ?? '2026-03-11',
    url: `https://lubimyczytac.pl/ksiazka/${b.id}/slug`,
    genre: 'https://lubimyczytac.pl/ksiazki/k/44/klasyka',
    inLanguage: 'polski',
    numberOfPages: b.pages ?? '128',
    isPartOfSeries: { '@type': 'BookSeries', name: 'Kanon W.A.B.', position: null, url: 'https://lubimyczytac.pl/seria/56437/kanon-w-a-b' },
    image: `https://s.lubimyczytac.pl/upload/books/${b.id}/cover-352x500.jpg`,
    author: b.authors.length === 1 ? { '@type': 'Person', name: b.authors[0], url: 'https://lubimyczytac.pl/autor/30856/x' } : b.authors.map((name) => ({ '@type': 'Person', name })),
    aggregateRating: { '@type': 'AggregateRating', worstRating: 1, bestRating: 10, ratingValue: (b.rating ?? '6.9').replace('.', ','), ratingCount: 8662 },
    review: (b.reviews ?? []).map((r) => ({
      '@type': 'Review',
      datePublished: r.date,
      url: `https://lubimyczytac.pl/ksiazka/${b.id}/slug#opinie`,
      author: { '@type': 'Person', name: r.author, url: 'https://lubimyczytac.pl/profil/1/x' },
      reviewBody: r.body,
      reviewRating: { '@type': 'Rating', ratingValue: r.rating, bestRating: '10', worstRating: '1' },
    })),
  };
  return `<!DOCTYPE html><html lang="pl"><head><meta charset="UTF-8"><title>${esc(b.title)} - ${esc(b.authors.join(', '))} | Książka w Lubimyczytac.pl - Opinie, oceny, ceny</title>
<meta property="og:title" content="${esc(b.title)}" /><meta property="books:isbn" content="${b.isbn}" /><meta property="books:rating:value" content="${b.rating ?? '6.90'}" /><meta property="books:rating:scale" content="10" /><meta property="books:author" content="${esc(b.authors[0] ?? '')}" /><meta property="og:image" content="https://s.lubimyczytac.pl/upload/books/${b.id}/cover-352x500.jpg" />
<script type="application/ld+json">{"@context":"http:\\/\\/schema.org","@type":"Organization","name":"Lubimyczyta\\u0107.pl","url":"https:\\/\\/lubimyczytac.pl"}</script>
<script type="application/ld+json">${JSON.stringify(ld)}</script></head><body>
<header><form class="searchbox" action="/szukaj/ksiazki"><input type="text" name="phrase" /></form></header>
<nav class="breadcrumbs"><ol><li class="breadcrumbs__item"><a class="breadcrumbs__name breadcrumbs__name--link" href="/ksiazki/k/44/klasyka"><span itemprop="name">Klasyka</span></a></li></ol></nav>
<div class="title-container relative"><h1 class="book__title"> ${esc(b.title)} </h1></div>
<div class="book-cover book-cover--desk"><a id="js-lightboxCover" href="https://s.lubimyczytac.pl/upload/books/${b.id}/cover-352x500.jpg" class="book-cover__link"><img src="https://s.lubimyczytac.pl/upload/books/${b.id}/cover-170x243.jpg" width="170" height="243"></a></div>
<span class="book__txt d-none d-lg-inline-block mt-2 "> Wydawnictwo: <a href="https://lubimyczytac.pl/wydawnictwo/9686/w-a-b">${esc(b.publisher ?? 'W.A.B.')}</a></span>
${b.cykl ? `<span class="d-none d-sm-block mt-1"> Cykl: <a href="/cykl/1234/x">${esc(b.cykl)}</a></span>` : ''}
<span class="d-none d-sm-block mt-1"> Seria:<a href="/seria/56437/kanon-w-a-b"> Kanon W.A.B. </a></span>
<div class="collapse" id="book-details"><dl><dt> Data wydania:</dt><dd> ${b.date ?? '2026-03-11'} </dd><dt> Liczba stron:</dt><dd> ${b.pages ?? '128'} </dd><dt> Język:</dt><dd> polski </dd><dt> ISBN:</dt><dd> ${b.isbn} </dd></dl></div>
<div class="book__description text-collapse" id="book-description">${b.description ?? ''}</div>
<div class="tags">${(b.tags ?? []).map((t) => `<a href="/ksiazki/t/${encodeURIComponent(t)}" class="tag">${esc(t)}</a>`).join(' ')}</div>
</body></html>`;
}

// ---------------------------------------------------------------- RanobeDB

export interface RanobeBookInput {
  id: number;
  title: string;
  englishTitle?: string;
  series?: { title: string; bookIds: number[] };
  author: string;
  isbn13?: string;
  releaseDate?: number;
  score?: number;
}

export function ranobeBook(b: RanobeBookInput): Record<string, unknown> {
  return {
    book: {
      description: 'A boy wakes up in another world.',
      lang: 'ja',
      id: b.id,
      romaji: b.title,
      description_ja: '',
      hidden: false,
      image_id: 100 + b.id,
      olang: 'ja',
      locked: false,
      c_release_date: 20120101,
      title: b.title,
      title_orig: b.title,
      romaji_orig: null,
      image: { id: 100 + b.id, filename: `${b.id}.jpg`, height: 600, nsfw: false, spoiler: false, width: 420 },
      rating: b.score !== undefined ? { score: b.score, count: 42 } : null,
      titles: [
        { lang: 'ja', romaji: b.title, book_id: b.id, official: true, title: b.title },
        ...(b.englishTitle ? [{ lang: 'en', romaji: null, book_id: b.id, official: true, title: b.englishTitle }] : []),
      ],
      editions: [{ book_id: b.id, lang: 'ja', title: 'Original', eid: 1, staff: [{ note: '', role_type: 'author', romaji: b.author, name: b.author, staff_id: 7, staff_alias_id: 7 }, { note: '', role_type: 'artist', romaji: 'Illustrator San', name: 'Illustrator San', staff_id: 8, staff_alias_id: 8 }] }],
      releases: [
        { lang: 'ja', id: 1, romaji: null, description: '', hidden: false, locked: false, release_date: 20120101, title: b.title, website: null, amazon: null, bookwalker: null, format: 'print', isbn13: null, pages: 300, rakuten: null },
        { lang: 'en', id: 2, romaji: null, description: '', hidden: false, locked: false, release_date: b.releaseDate ?? 20150421, title: b.englishTitle ?? b.title, website: null, amazon: null, bookwalker: null, format: 'print', isbn13: b.isbn13 ?? null, pages: 240, rakuten: null },
      ],
      publishers: [
        { lang: 'ja', id: 1, romaji: 'Kadokawa', name: 'KADOKAWA', publisher_type: 'publisher' },
        { lang: 'en', id: 2, romaji: null, name: 'Yen On', publisher_type: 'publisher' },
        { lang: 'en', id: 3, romaji: null, name: 'Yen Press', publisher_type: 'imprint' },
      ],
      series: b.series
        ? {
            books: b.series.bookIds.map((id) => ({ id, lang: 'ja', romaji: null, title: `Vol ${id}`, title_orig: null, romaji_orig: null, image: null })),
            tags: [
              { id: 1, name: 'fantasy', ttype: 'genre' },
              { id: 2, name: 'slice of life', ttype: 'genre' },
              { id: 3, name: 'isekai', ttype: 'tag' },
            ],
            lang: 'ja',
            id: 55,
            romaji: b.series.title,
            title: b.series.title,
            title_orig: b.series.title,
            romaji_orig: null,
          }
        : null,
    },
  };
}

// ---------------------------------------------------------------- DuckDuckGo images

/** The image results page: what matters is the per-query token in its inline script. */
export function duckDuckGoResultsPage(query: string, token: string): string {
  return `<!DOCTYPE html><html lang="en-US"><head><meta charset="utf-8"><title>${esc(query)} at DuckDuckGo</title></head><body><div id="header_wrapper"></div><div id="zero_click_wrapper"></div>
<script type="text/javascript">DDG.page = new DDG.Pages.SERP({ showSponsored: false, query: "${esc(query)}" });DDG.deep.initialize('/d.js?q=x&l=us-en&p=1&s=0&ct=US&vqd=${token}&bing_market=en-US', true);</script>
<script>nrj('/t.js?q=x&l=us-en&s=0&dl=en&ct=US&ss_mkt=us&vqd="${token}"&p_ent=&ex=-1');</script></body></html>`;
}

/** `i.js` results: one object per image with its size, thumbnail and source page. */
export function duckDuckGoImages(images: { url: string; width: number; height: number }[]): Record<string, unknown> {
  return {
    ads: null,
    next: 'i.js?q=x&o=json&p=1&s=100&u=bing&f=,,,,,&l=us-en',
    query: 'x',
    queryEncoded: 'x',
    response_type: 'places',
    results: images.map((img, i) => ({
      height: img.height,
      image: img.url,
      image_token: `tok${i}`,
      source: 'Bing',
      thumbnail: `https://tse${i}.mm.bing.net/th?id=OIP.${i}&pid=Api`,
      thumbnail_token: `th${i}`,
      title: `Image ${i}`,
      url: `https://example.org/page/${i}`,
      width: img.width,
    })),
    vqd: { x: '4-1' },
  };
}

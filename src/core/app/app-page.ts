// The mobile API's own page envelope (AppPageResponse: flat, 0-based) and its paging rules: sizes capped at 50,
// out-of-range numbers replaced by the defaults rather than refused.

export interface AppPage<T> {
  content: T[];
  page: number;
  size: number;
  totalElements: number;
  totalPages: number;
  hasNext: boolean;
  hasPrevious: boolean;
}

/** No app list returns more than this many items at once. */
export const APP_MAX_PAGE_SIZE = 50;

export function appPage<T>(content: T[], page: number, size: number, totalElements: number): AppPage<T> {
  const totalPages = size > 0 ? Math.ceil(totalElements / size) : 0;
  return { content, page, size, totalElements, totalPages, hasNext: page < totalPages - 1, hasPrevious: page > 0 };
}

/** A page number as given, or 0 when missing or negative. */
export function pageNumber(page: number | undefined): number {
  return page !== undefined && page >= 0 ? page : 0;
}

/** A page size or list limit as given (at most 50), or `fallback` when missing or not positive. */
export function pageSize(size: number | undefined, fallback: number): number {
  return size !== undefined && size > 0 ? Math.min(size, APP_MAX_PAGE_SIZE) : fallback;
}

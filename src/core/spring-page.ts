// Grimmory's `Page` JSON: Spring Data serialised "via DTO" (schemas.md): the content, then the page's numbers.
export interface SpringPage<T> {
  content: T[];
  page: { size: number; number: number; totalElements: number; totalPages: number };
}

export function springPage<T>(content: T[], page: number, size: number, total: number): SpringPage<T> {
  return { content, page: { size, number: page, totalElements: total, totalPages: size > 0 ? Math.ceil(total / size) : 0 } };
}

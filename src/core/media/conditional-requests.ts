// Validators in request headers (RFC 9110 §13): If-None-Match / If-Modified-Since for 304s, If-Range for partial content.

function seconds(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}

function opaque(tag: string): string {
  return tag.trim().replace(/^W\//, '');
}

/** Whether the client's copy is current: any If-None-Match tag matches (weakly), or, without one, If-Modified-Since is not older. */
export function isNotModified(ifNoneMatch: string | undefined, ifModifiedSince: string | undefined, etag: string, lastModified: Date | undefined): boolean {
  if (ifNoneMatch !== undefined) {
    const tags = ifNoneMatch.split(',').map((t) => t.trim());
    return tags.includes('*') || tags.some((t) => opaque(t) === opaque(etag));
  }
  if (ifModifiedSince === undefined || lastModified === undefined) return false;
  const since = Date.parse(ifModifiedSince);
  return Number.isFinite(since) && seconds(lastModified) <= Math.floor(since / 1000);
}

/** `If-Range` holds when it names the current ETag (strong comparison) or a date not before the last modification. */
export function ifRangeHolds(ifRange: string | undefined, etag: string, lastModified: Date): boolean {
  if (!ifRange) return true;
  const value = ifRange.trim();
  if (value.startsWith('"') || value.startsWith('W/')) return value === etag;
  const date = Date.parse(value);
  return Number.isFinite(date) && seconds(lastModified) <= Math.floor(date / 1000);
}

// Candidate author photos from DuckDuckGo's image search, as Grimmory finds them: the name with "author photo
// portrait", images hosted by Amazon or Goodreads first, at most 50, numbered from 1 (CoverImage).
import { searchImages, type ImageHit, type ImageSearchClient } from '../metadata/duckduckgo-images.ts';

export interface PhotoCandidate {
  url: string;
  width: number;
  height: number;
  index: number;
}

const MAX_RESULTS = 50;

export function rankAuthorPhotos(hits: readonly ImageHit[]): PhotoCandidate[] {
  const preferred = (hit: ImageHit): boolean => /amazon|goodreads/i.test(hit.url);
  return [...hits.filter(preferred), ...hits.filter((h) => !preferred(h))]
    .slice(0, MAX_RESULTS)
    .map((hit, i) => ({ url: hit.url, width: hit.width, height: hit.height, index: i + 1 }));
}

export async function searchAuthorPhotos(client: ImageSearchClient, name: string): Promise<PhotoCandidate[]> {
  return rankAuthorPhotos(await searchImages(client, `${name.trim()} author photo portrait`, ''));
}

// Every author metadata source, in the order quick-match tries them. To add one: write ./<name>.ts exporting an
// AuthorSource (contract in ../author-source.ts), add its id to AUTHOR_METADATA_SOURCES and list it here.
import type { AuthorMetadataSource, AuthorSource } from '../author-source.ts';
import { audnexusSource } from './audnexus.ts';

export const AUTHOR_SOURCES: readonly AuthorSource[] = [audnexusSource];

export function authorSourceById(id: AuthorMetadataSource): AuthorSource | undefined {
  return AUTHOR_SOURCES.find((s) => s.id === id);
}

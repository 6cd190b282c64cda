// Every metadata provider Bindery knows, one line each. To add one: write ./<name>.ts exporting a MetadataProvider
// (contract in ../provider.ts) and add it to PROVIDERS below.
import type { MetadataProvider, ProviderId } from '../provider.ts';
import { comicvineProvider } from './comicvine.ts';
import { googleProvider } from './google.ts';
import { hardcoverProvider } from './hardcover.ts';
import { openLibraryProvider } from './open-library.ts';
import { amazonProvider } from './amazon.ts';
import { goodreadsProvider } from './goodreads.ts';
import { audibleProvider } from './audible.ts';
import { doubanProvider } from './douban.ts';
import { lubimyczytacProvider } from './lubimyczytac.ts';
import { ranobedbProvider } from './ranobedb.ts';

export const PROVIDERS: readonly MetadataProvider[] = [
  googleProvider,
  openLibraryProvider,
  hardcoverProvider,
  comicvineProvider,
  amazonProvider,
  goodreadsProvider,
  audibleProvider,
  doubanProvider,
  lubimyczytacProvider,
  ranobedbProvider,
];

export function providerById(id: string): MetadataProvider | undefined {
  return PROVIDERS.find((p) => p.id === id);
}

export function providerIds(): ProviderId[] {
  return PROVIDERS.map((p) => p.id);
}

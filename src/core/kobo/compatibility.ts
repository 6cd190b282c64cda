// Which books a Kobo receives, and in which format.
import type { KoboPrimaryFile } from './kobo-books.ts';
import type { KoboServerSettings } from './server-settings.ts';

export type KoboBookFormat = 'EPUB3' | 'KEPUB' | 'EPUB3FL';

/**
 * Books whose primary file is an EPUB. (Grimmory can also send comics converted to EPUB when `convertCbxToEpub` is on;
 * Bindery does not convert comics, so they never sync.)
 */
export function syncsToKobo(primary: KoboPrimaryFile | undefined): primary is KoboPrimaryFile {
  return primary?.bookType === 'EPUB';
}

/** Reflowable EPUBs within the size limit are converted when conversion is on; fixed-layout ones never are. */
export function convertsToKepub(primary: KoboPrimaryFile, settings: Pick<KoboServerSettings, 'convertToKepub' | 'conversionLimitInMb'>): boolean {
  return primary.bookType === 'EPUB' && !primary.fixedLayout && settings.convertToKepub && (primary.sizeKb ?? 0) <= settings.conversionLimitInMb * 1024;
}

export function koboFormat(primary: KoboPrimaryFile, settings: Pick<KoboServerSettings, 'convertToKepub' | 'conversionLimitInMb'>): KoboBookFormat {
  if (primary.fixedLayout) return 'EPUB3FL';
  return convertsToKepub(primary, settings) ? 'KEPUB' : 'EPUB3';
}

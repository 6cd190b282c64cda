// The administrator's Kobo settings (application setting KOBO_SETTINGS): conversion and store forwarding.
import { readSetting } from '../settings/app-settings.ts';
import type { Db } from '../store/store.ts';

export interface KoboServerSettings {
  convertToKepub: boolean;
  conversionLimitInMb: number;
  convertCbxToEpub: boolean;
  conversionLimitInMbForCbx: number;
  forceEnableHyphenation: boolean;
  conversionImageCompressionPercentage: number;
  forwardToKoboStore: boolean;
}

export async function koboServerSettings(db: Db): Promise<KoboServerSettings> {
  const value = ((await readSetting(db, 'KOBO_SETTINGS')) ?? {}) as Partial<KoboServerSettings>;
  return {
    convertToKepub: value.convertToKepub ?? true,
    conversionLimitInMb: value.conversionLimitInMb ?? 100,
    convertCbxToEpub: value.convertCbxToEpub ?? false,
    conversionLimitInMbForCbx: value.conversionLimitInMbForCbx ?? 100,
    forceEnableHyphenation: value.forceEnableHyphenation ?? false,
    conversionImageCompressionPercentage: value.conversionImageCompressionPercentage ?? 85,
    forwardToKoboStore: value.forwardToKoboStore ?? true,
  };
}

// The sidecar switches of the METADATA_PERSISTENCE_SETTINGS application setting.
import { readSetting } from '../settings/app-settings.ts';
import type { Db } from '../store/store.ts';

export interface SidecarSettings {
  /** Sidecar files may be written into library folders at all (Grimmory also shows its sidecar tab only then). */
  enabled: boolean;
  /** Rewrite a book's sidecar after its metadata changes. */
  writeOnUpdate: boolean;
  /** Write a sidecar for every book a scan adds. */
  writeOnScan: boolean;
  /** Put the cover beside the sidecar as `<book>.cover.jpg`. */
  includeCoverFile: boolean;
}

/** The stored switches; all off while the setting has no `sidecarSettings` (a fresh install). */
export async function sidecarSettings(db: Db): Promise<SidecarSettings> {
  const persistence = (await readSetting(db, 'METADATA_PERSISTENCE_SETTINGS')) as { sidecarSettings?: Partial<SidecarSettings> | null } | null;
  const s = persistence?.sidecarSettings ?? {};
  return { enabled: s.enabled === true, writeOnUpdate: s.writeOnUpdate === true, writeOnScan: s.writeOnScan === true, includeCoverFile: s.includeCoverFile === true };
}

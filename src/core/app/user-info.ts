// AppUserInfo: what the app may offer the caller (admin, upload, download, bookdrop) and the upload size limit.
import type { Principal } from '../auth/principal.ts';
import { maxUploadMb } from '../bookdrop/upload.ts';
import type { Store } from '../store/store.ts';

export interface AppUserInfo {
  admin: boolean;
  canUpload: boolean;
  canDownload: boolean;
  canAccessBookdrop: boolean;
  maxFileUploadSizeMb: number;
}

export async function appUserInfo(store: Store, principal: Principal): Promise<AppUserInfo> {
  const p = principal.permissions;
  return { admin: p.admin, canUpload: p.canUpload, canDownload: p.canDownload, canAccessBookdrop: p.canAccessBookdrop, maxFileUploadSizeMb: await maxUploadMb(store) };
}

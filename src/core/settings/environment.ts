// Settings that come from the process environment rather than the catalog (Grimmory's variable names are honoured).
export interface SettingsEnvironment {
  /** Header-based (forward-auth) login is switched on. */
  remoteAuthEnabled: boolean;
  /** OIDC is reported off in the full settings whatever the stored switch says. */
  forceDisableOidc: boolean;
  diskType: string;
}

function flag(value: string | undefined): boolean {
  return value?.trim().toLowerCase() === 'true';
}

export function settingsEnvironment(env: NodeJS.ProcessEnv = process.env): SettingsEnvironment {
  return {
    remoteAuthEnabled: flag(env.BINDERY_REMOTE_AUTH_ENABLED ?? env.REMOTE_AUTH_ENABLED),
    forceDisableOidc: flag(env.BINDERY_FORCE_DISABLE_OIDC ?? env.FORCE_DISABLE_OIDC),
    diskType: env.BINDERY_DISK_TYPE ?? env.DISK_TYPE ?? 'LOCAL',
  };
}

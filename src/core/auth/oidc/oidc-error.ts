// Refusals of the OIDC sign-in, named after Grimmory's ApiError codes and carrying its message texts.
// Callers map the code to a transport status (src/daemon/routes/oidc.ts).
import { CodedError } from '../../coded-error.ts';

export type OidcErrorCode =
  | 'OIDC_DISABLED'
  | 'OIDC_NOT_CONFIGURED'
  | 'OIDC_INVALID_STATE'
  | 'OIDC_INVALID_REDIRECT_URI'
  | 'OIDC_TOKEN_EXCHANGE_FAILED'
  | 'OIDC_PROVIDER_UNREACHABLE'
  | 'OIDC_INVALID_TOKEN'
  | 'OIDC_USER_NOT_PROVISIONED'
  | 'USERNAME_ALREADY_TAKEN'
  | 'OIDC_LOGOUT_INVALID'
  | 'OIDC_LOGOUT_MISSING_JTI'
  | 'OIDC_LOGOUT_REPLAY'
  | 'GROUP_MAPPING_NOT_FOUND'
  | 'GROUP_MAPPING_CONFLICT';

export class OidcError extends CodedError<OidcErrorCode> {}

export const oidcDisabled = (): OidcError => new OidcError('OIDC_DISABLED', 'OIDC is not enabled');
export const oidcNotConfigured = (): OidcError => new OidcError('OIDC_NOT_CONFIGURED', 'OIDC is not properly configured');
export const invalidState = (): OidcError => new OidcError('OIDC_INVALID_STATE', 'Invalid or expired OIDC state parameter');
export const invalidRedirectUri = (): OidcError => new OidcError('OIDC_INVALID_REDIRECT_URI', 'Invalid redirect URI');
export const tokenExchangeFailed = (reason: string): OidcError => new OidcError('OIDC_TOKEN_EXCHANGE_FAILED', `Failed to exchange authorization code: ${reason}`);
export const providerUnreachable = (reason: string): OidcError => new OidcError('OIDC_PROVIDER_UNREACHABLE', `Cannot reach OIDC provider: ${reason}`);
export const invalidToken = (reason: string): OidcError => new OidcError('OIDC_INVALID_TOKEN', `Invalid token from OIDC provider: ${reason}`);
export const notProvisioned = (username: string): OidcError =>
  new OidcError('OIDC_USER_NOT_PROVISIONED', `OIDC user '${username}' is not provisioned and auto-provisioning is disabled`);
export const usernameTaken = (username: string): OidcError => new OidcError('USERNAME_ALREADY_TAKEN', `Username already taken: ${username}`);
export const logoutInvalid = (reason: string): OidcError => new OidcError('OIDC_LOGOUT_INVALID', reason);
export const logoutMissingJti = (): OidcError => new OidcError('OIDC_LOGOUT_MISSING_JTI', 'Logout token missing required jti claim');
export const logoutReplay = (): OidcError => new OidcError('OIDC_LOGOUT_REPLAY', 'Logout token has already been processed');

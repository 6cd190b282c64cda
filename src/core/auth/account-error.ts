// Refusals of the account and sign-in operations, named after Grimmory's ApiError codes and carrying its message text.
// Callers map the code to a transport status (HTTP in the daemon, exit codes in the CLI).
import { CodedError } from '../coded-error.ts';

export type AccountErrorCode =
  | 'INVALID_CREDENTIALS'
  | 'RATE_LIMITED'
  | 'OIDC_ONLY_MODE'
  | 'REMOTE_AUTH_DISABLED'
  | 'REMOTE_USER_MISSING'
  | 'REMOTE_USER_NOT_PROVISIONED'
  | 'USER_NOT_FOUND'
  | 'USERNAME_ALREADY_TAKEN'
  | 'DATA_CONFLICT'
  | 'SELF_DELETION_NOT_ALLOWED'
  | 'PASSWORD_INCORRECT'
  | 'PASSWORD_TOO_SHORT'
  | 'PASSWORD_TOO_LONG'
  | 'PASSWORD_SAME_AS_CURRENT'
  | 'DEMO_USER_PASSWORD_CHANGE_NOT_ALLOWED'
  | 'INVALID_INPUT';

export class AccountError extends CodedError<AccountErrorCode> {}

/** Grimmory's fixed message texts (the too-short text says 6 although 8 characters are required, as Grimmory's does). */
export const ACCOUNT_MESSAGES = {
  INVALID_CREDENTIALS: 'Invalid credentials',
  RATE_LIMITED: 'Too many failed login attempts. Please try again later.',
  OIDC_ONLY_MODE: 'Local login is disabled. Use OIDC to sign in.',
  REMOTE_AUTH_DISABLED: 'Remote login is disabled',
  SELF_DELETION_NOT_ALLOWED: 'You cannot delete your own account',
  PASSWORD_INCORRECT: 'Incorrect current password',
  PASSWORD_TOO_SHORT: 'Password must be at least 6 characters long',
  PASSWORD_SAME_AS_CURRENT: 'New password cannot be the same as the current password',
  DEMO_USER_PASSWORD_CHANGE_NOT_ALLOWED: 'Demo user password change not allowed.',
  DATA_CONFLICT: 'A data conflict occurred. The operation could not be completed.',
} as const;

export const accountError = (code: keyof typeof ACCOUNT_MESSAGES): AccountError => new AccountError(code, ACCOUNT_MESSAGES[code]);
export const userNotFound = (idOrName: number | string | null | undefined): AccountError => new AccountError('USER_NOT_FOUND', `User not found: ${idOrName ?? 'null'}`);
export const invalidInput = (message: string): AccountError => new AccountError('INVALID_INPUT', message);

// Refusals of the e-mail operations, named after Grimmory's ApiError codes.
import { CodedError } from '../coded-error.ts';

export type EmailErrorCode =
  | 'EMAIL_PROVIDER_NOT_FOUND'
  | 'DEFAULT_EMAIL_PROVIDER_NOT_FOUND'
  | 'EMAIL_RECIPIENT_NOT_FOUND'
  | 'DEFAULT_EMAIL_RECIPIENT_NOT_FOUND'
  | 'DUPLICATE_RECIPIENT'
  | 'FORBIDDEN'
  | 'FILE_NOT_FOUND';

export class EmailError extends CodedError<EmailErrorCode> {}

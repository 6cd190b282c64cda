// Why an author operation was refused; routes turn the code into an HTTP status.
import { CodedError } from '../coded-error.ts';

export type AuthorErrorCode = 'NOT_FOUND' | 'INVALID' | 'NAME_TAKEN' | 'UNSUPPORTED_SOURCE' | 'NO_RESULT';

export class AuthorError extends CodedError<AuthorErrorCode> {}

export const authorNotFound = (id: number | string): AuthorError => new AuthorError('NOT_FOUND', `Author not found with ID: ${id}`);

// Why an app request was refused; the routes turn the code into Grimmory's status.
import { CodedError } from '../coded-error.ts';

export type AppErrorCode = 'BAD_REQUEST' | 'FORBIDDEN' | 'NOT_FOUND';

export class AppError extends CodedError<AppErrorCode> {}

export const appForbidden = (message: string): AppError => new AppError('FORBIDDEN', message);
export const appBadRequest = (message: string): AppError => new AppError('BAD_REQUEST', message);
export const appNotFound = (message: string): AppError => new AppError('NOT_FOUND', message);

// Grimmory's ErrorResponse body: {status, message, timestamp, details?}; the timestamp is a zone-less local date-time.
import { localDateTime } from '../core/time.ts';
export interface ErrorBody {
  status: number;
  message: string;
  timestamp: string;
  details?: string[];
}

export class ApiError extends Error {
  override name = 'ApiError';
  readonly status: number;
  readonly details: string[] | undefined;
  constructor(status: number, message: string, details?: string[]) {
    super(message);
    this.status = status;
    this.details = details;
  }
}

export { localDateTime } from '../core/time.ts';

export function errorBody(status: number, message: string, details?: string[]): ErrorBody {
  return { status, message, timestamp: localDateTime(), ...(details && details.length > 0 ? { details } : {}) };
}

export const badRequest = (message: string, details?: string[]): ApiError => new ApiError(400, message, details);
export const unauthorized = (message = 'Unauthorized'): ApiError => new ApiError(401, message);
export const forbidden = (message = 'Access denied.'): ApiError => new ApiError(403, message);
export const notFound = (message = 'Resource not found.'): ApiError => new ApiError(404, message);
export const conflict = (message = 'A conflict occurred.'): ApiError => new ApiError(409, message);
export const bookNotFound = (id: number | string): ApiError => new ApiError(404, `Book not found with ID: ${id}`);

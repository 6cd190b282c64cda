// Grimmory's SuccessResponse envelope.
import { localDateTime } from './http-errors.ts';

export function success<T>(data: T, message?: string, status = 200): { status: number; message?: string; data: T; timestamp: string } {
  return { status, ...(message !== undefined ? { message } : {}), data, timestamp: localDateTime() };
}

// An image a user names by URL (a cover, an author photo) is fetched by the shared outgoing client; its refusals
// become answers the user can act on, the same for every kind of image.
import { OutgoingRequestError } from '../core/net/http-client.ts';
import { ApiError, badRequest } from './http-errors.ts';
import type { UploadLimit } from './multipart-upload.ts';

/** `error` as the route's answer: a bad or refused URL, a non-image or an oversized one are 400s, the rest 502. */
export function imageUrlRefusal(error: unknown, noun: 'cover' | 'photo', limit: UploadLimit): unknown {
  if (!(error instanceof OutgoingRequestError)) return error;
  switch (error.code) {
    case 'INVALID_URL':
      return badRequest(`The ${noun} URL is not valid: ${error.message}`);
    case 'BLOCKED_ADDRESS':
      return badRequest(`The ${noun} URL was refused: ${error.message}`);
    case 'TOO_LARGE':
      return limit.tooLarge();
    case 'BAD_CONTENT_TYPE':
      return badRequest(`The ${noun} URL did not return an image`);
    default:
      return new ApiError(502, `The ${noun} could not be downloaded: ${error.message}`);
  }
}

// The refusal of the password pool when its queue is full; apart from the pool so that catching it loads no threads.

/** Too many password checks are waiting; the caller should answer 503 with Retry-After. */
export class PasswordBusyError extends Error {
  override name = 'PasswordBusyError';
  constructor() {
    super('Too many sign-in attempts are being checked; try again shortly.');
  }
}

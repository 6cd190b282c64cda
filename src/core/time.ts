/** Instants are stored and sent as ISO-8601 UTC strings with milliseconds. */
export function nowIso(): string {
  return new Date().toISOString();
}

/** Instants are stored and sent as ISO-8601 UTC strings with milliseconds. */
export function nowIso(): string {
  return new Date().toISOString();
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/**
 * A zone-less local date-time as Jackson writes a LocalDateTime. `fraction`: `micros` (always six digits, as
 * Grimmory's error bodies have them), `millis` (always three) or `auto` (three, and none when they are zero).
 */
export function localDateTime(date: Date = new Date(), fraction: 'micros' | 'millis' | 'auto' = 'micros'): string {
  const ms = date.getMilliseconds();
  const tail = fraction === 'micros' ? `.${pad(ms, 3)}000` : fraction === 'millis' || ms !== 0 ? `.${pad(ms, 3)}` : '';
  return `${pad(date.getFullYear(), 4)}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}${tail}`;
}

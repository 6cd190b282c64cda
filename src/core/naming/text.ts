// Text rules of the naming-pattern language: what a value may contain, byte limits, and Java-style blank tests.

/** Characters that cannot appear in a file or folder name on some filesystem we care about. */
const ILLEGAL = /[\\/:*?"<>|]/g;
/** C0 controls and DEL (Java's `\p{Cntrl}` without the Unicode flag). */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\x00-\x1f\x7f]/g;

/**
 * Cleans one placeholder value: illegal characters and control characters are removed, runs of spaces become one
 * space, and the ends are trimmed. Tabs and newlines are control characters, so they disappear rather than become spaces.
 */
export function sanitize(value: string | null | undefined): string {
  if (value === null || value === undefined) return '';
  return value.replace(ILLEGAL, '').replace(CONTROL, '').replace(/ +/g, ' ').replace(/^ +| +$/g, '');
}

/** Java's `String.isBlank`: empty or only whitespace; non-breaking spaces are not whitespace there. */
export function isBlank(value: string | null | undefined): boolean {
  if (value === null || value === undefined) return true;
  return /^\s*$/.test(value.replace(/[\u00a0\u2007\u202f\ufeff]/g, 'x'));
}

export function utf8Length(value: string): number {
  return Buffer.byteLength(value, 'utf8');
}

/** The longest prefix of `value` that fits in `maxBytes` of UTF-8, never splitting a character. */
export function truncateUtf8(value: string, maxBytes: number): string {
  if (utf8Length(value) <= maxBytes) return value;
  let bytes = 0;
  let end = 0;
  for (const ch of value) {
    const size = utf8Length(ch);
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += ch.length;
  }
  return value.slice(0, end);
}

/** Splits a list value the way the pattern language does: on `, ` exactly. */
export function listItems(value: string): string[] {
  return value.split(', ');
}

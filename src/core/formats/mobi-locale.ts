// The MOBI header's locale is a Windows LCID; its low byte is the primary language.

const LANGUAGE_BY_PRIMARY_ID: Readonly<Record<number, string>> = {
  0x01: 'ar', 0x02: 'bg', 0x03: 'ca', 0x04: 'zh', 0x05: 'cs', 0x06: 'da', 0x07: 'de', 0x08: 'el', 0x09: 'en',
  0x0a: 'es', 0x0b: 'fi', 0x0c: 'fr', 0x0d: 'he', 0x0e: 'hu', 0x0f: 'is', 0x10: 'it', 0x11: 'ja', 0x12: 'ko',
  0x13: 'nl', 0x14: 'no', 0x15: 'pl', 0x16: 'pt', 0x18: 'ro', 0x19: 'ru', 0x1a: 'hr', 0x1b: 'sk', 0x1d: 'sv',
  0x1e: 'th', 0x1f: 'tr', 0x21: 'id', 0x22: 'uk', 0x24: 'sl', 0x25: 'et', 0x26: 'lv', 0x27: 'lt', 0x29: 'fa',
  0x2a: 'vi', 0x39: 'hi',
};

/** ISO 639-1 code for an LCID, or undefined for 0 and languages we do not list. */
export function languageOfLocale(locale: number): string | undefined {
  return LANGUAGE_BY_PRIMARY_ID[locale & 0xff];
}

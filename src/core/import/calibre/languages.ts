// calibre records languages as ISO 639-2/3 codes (`eng`); Grimmory and Bindery use the two-letter ISO 639-1 code
// where there is one. Codes with no two-letter form stay as they are.
const TWO_LETTER: Record<string, string> = {
  ara: 'ar', bul: 'bg', cat: 'ca', ces: 'cs', cze: 'cs', chi: 'zh', zho: 'zh', dan: 'da', deu: 'de', ger: 'de', ell: 'el', gre: 'el', eng: 'en',
  epo: 'eo', est: 'et', eus: 'eu', baq: 'eu', fas: 'fa', per: 'fa', fin: 'fi', fra: 'fr', fre: 'fr', gle: 'ga', glg: 'gl', heb: 'he', hin: 'hi',
  hrv: 'hr', hun: 'hu', ind: 'id', isl: 'is', ice: 'is', ita: 'it', jpn: 'ja', kor: 'ko', lat: 'la', lit: 'lt', lav: 'lv', nld: 'nl', dut: 'nl',
  nor: 'no', nob: 'nb', nno: 'nn', pol: 'pl', por: 'pt', ron: 'ro', rum: 'ro', rus: 'ru', slk: 'sk', slo: 'sk', slv: 'sl', spa: 'es', srp: 'sr',
  swe: 'sv', tha: 'th', tur: 'tr', ukr: 'uk', vie: 'vi', cym: 'cy', wel: 'cy', afr: 'af', bel: 'be', ben: 'bn', mkd: 'mk', mac: 'mk', msa: 'ms', may: 'ms',
};

export function languageCode(code: string): string {
  return TWO_LETTER[code.toLowerCase()] ?? code;
}

// Builds FictionBook 2 documents (plain, windows-1251, zipped) for the extractor tests.
import fs from 'node:fs';
import { writeZip } from './epub-fixtures.ts';

export interface Fb2Binary {
  id: string;
  contentType: string;
  data: Buffer;
}

export interface Fb2Spec {
  /** Declared and actual encoding of the document. */
  encoding?: 'utf-8' | 'windows-1251';
  /** Inner XML of <title-info>. */
  titleInfo: string;
  publishInfo?: string;
  documentInfo?: string;
  /** Raw text placed between the XML declaration and the root element (DOCTYPE tests). */
  prolog?: string;
  /** Paragraphs of filler text in the body, to make a book of realistic size. */
  bodyParagraphs?: number;
  binaries?: Fb2Binary[];
}

/** windows-1251 has no encoder in Node; invert the decoder's table. */
function encodeWindows1251(text: string): Buffer {
  const decoded = new TextDecoder('windows-1251').decode(Uint8Array.from({ length: 256 }, (_, i) => i));
  const byChar = new Map<string, number>();
  [...decoded].forEach((char, byte) => byChar.set(char, byte));
  return Buffer.from([...text].map((char) => {
    const byte = byChar.get(char);
    if (byte === undefined) throw new Error(`cannot encode ${char} in windows-1251`);
    return byte;
  }));
}

function base64Lines(data: Buffer): string {
  return (data.toString('base64').match(/.{1,76}/g) ?? []).join('\n');
}

export function fb2Document(spec: Fb2Spec): Buffer {
  const encoding = spec.encoding ?? 'utf-8';
  const paragraph = '<p>Он шёл по дороге, and the road went on and on into the night.</p>\n';
  const xml = `<?xml version="1.0" encoding="${encoding}"?>
${spec.prolog ?? ''}
<FictionBook xmlns="http://www.gribuser.ru/xml/fictionbook/2.0" xmlns:l="http://www.w3.org/1999/xlink">
<description>
<title-info>${spec.titleInfo}</title-info>
${spec.documentInfo ? `<document-info>${spec.documentInfo}</document-info>` : ''}
${spec.publishInfo ? `<publish-info>${spec.publishInfo}</publish-info>` : ''}
</description>
<body><section><title><p>One</p></title>
${paragraph.repeat(spec.bodyParagraphs ?? 3)}</section></body>
${(spec.binaries ?? []).map((b) => `<binary id="${b.id}" content-type="${b.contentType}">\n${base64Lines(b.data)}\n</binary>`).join('\n')}
</FictionBook>
`;
  return encoding === 'windows-1251' ? encodeWindows1251(xml) : Buffer.from(xml, 'utf8');
}

export function writeFb2(file: string, spec: Fb2Spec): void {
  fs.writeFileSync(file, fb2Document(spec));
}

export async function writeFb2Zip(file: string, spec: Fb2Spec, innerName = 'book.fb2'): Promise<void> {
  await writeZip(file, [{ name: innerName, data: fb2Document(spec) }]);
}

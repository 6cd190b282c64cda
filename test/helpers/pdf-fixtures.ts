// Builds PDF test files on the fly: pdf-lib for ordinary ones, a small hand writer for encrypted ones.
import type { TempDir } from './temp-dir.ts';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { PDFDocument, PDFHexString, PDFName, StandardFonts, rgb } from 'pdf-lib';
import type { PDFDict } from 'pdf-lib';

export interface PdfSpec {
  title?: string;
  author?: string;
  subject?: string;
  keywords?: string[];
  creationDate?: Date;
  /** Extra Info dictionary entries (e.g. EBX_PUBLISHER). */
  customInfo?: Record<string, string>;
  pages?: number;
  /** Page size in points; default A5-ish 420 × 595. */
  pageSize?: [number, number];
  /** Fill page one with this colour (0..1 RGB). */
  fill?: [number, number, number];
  /** Large black text on page one, in Helvetica (a standard font pdf-lib does not embed). */
  text?: string;
  /** XMP packet to attach as the catalog's /Metadata stream. */
  xmp?: string;
  /** Pad page two with an unreferenced-by-page-one stream of this many bytes. */
  paddingBytes?: number;
  /** A JPEG drawn on page one, over the whole page unless a box (points from the bottom left) is given. */
  image?: { jpeg: Buffer; box?: [x: number, y: number, width: number, height: number] };
  /** Objects in object streams with a cross-reference stream (PDF 1.5+), as most writers do today; default false. */
  objectStreams?: boolean;
}

export async function buildPdf(spec: PdfSpec = {}): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  if (spec.title !== undefined) doc.setTitle(spec.title);
  if (spec.author !== undefined) doc.setAuthor(spec.author);
  if (spec.subject !== undefined) doc.setSubject(spec.subject);
  if (spec.keywords !== undefined) doc.setKeywords(spec.keywords);
  if (spec.creationDate !== undefined) doc.setCreationDate(spec.creationDate);
  const [width, height] = spec.pageSize ?? [420, 595];
  for (let i = 0; i < (spec.pages ?? 1); i++) {
    const page = doc.addPage([width, height]);
    if (i === 0 && spec.fill) page.drawRectangle({ x: 0, y: 0, width, height, color: rgb(...spec.fill) });
    if (i === 0 && spec.image) {
      const [x, y, w, h] = spec.image.box ?? [0, 0, width, height];
      page.drawImage(await doc.embedJpg(spec.image.jpeg), { x, y, width: w, height: h });
    }
    if (i === 0 && spec.text) {
      const font = await doc.embedFont(StandardFonts.HelveticaBold);
      page.drawText(spec.text, { x: 10, y: height / 2, size: width / 5, font, color: rgb(0, 0, 0) });
    }
  }
  if (spec.customInfo) {
    // pdf-lib only exposes the standard keys; its Info dictionary accessor is private but stable.
    const info = (doc as unknown as { getInfoDict(): PDFDict }).getInfoDict();
    for (const [key, value] of Object.entries(spec.customInfo)) info.set(PDFName.of(key), PDFHexString.fromText(value));
  }
  if (spec.xmp !== undefined) {
    const stream = doc.context.stream(Buffer.from(spec.xmp, 'utf8'), { Type: 'Metadata', Subtype: 'XML' });
    doc.catalog.set(PDFName.of('Metadata'), doc.context.register(stream));
  }
  if (spec.paddingBytes) {
    if (doc.getPageCount() < 2) doc.addPage([width, height]);
    const filler = doc.context.stream(Buffer.alloc(spec.paddingBytes, 0x20), {});
    doc.getPage(1).node.set(PDFName.of('PieceInfo'), doc.context.register(filler));
  }
  return doc.save({ useObjectStreams: spec.objectStreams ?? false });
}

export async function writePdf(fixture: TempDir, name: string, spec: PdfSpec = {}): Promise<string> {
  const file = fixture.file(name);
  fs.writeFileSync(file, await buildPdf(spec));
  return file;
}

/** Points the trailer's `startxref` at the wrong offset, so pdf.js must rebuild the cross-reference table. */
export function breakStartXref(pdf: Uint8Array): Buffer {
  const bytes = Buffer.from(pdf);
  const at = bytes.lastIndexOf('startxref');
  const match = /startxref\s+(\d+)/.exec(bytes.subarray(at, at + 40).toString('latin1'));
  if (!match) throw new Error('no startxref to break');
  const digits = match[1]!;
  const wrong = String(Math.max(0, Number(digits) - 37)).padStart(digits.length, '0');
  bytes.write(wrong, at + match[0].length - digits.length, 'latin1');
  return bytes;
}

export function xmpPacket(body: string): string {
  return `<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/">
  <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
    <rdf:Description rdf:about=""
        xmlns:dc="http://purl.org/dc/elements/1.1/"
        xmlns:xmp="http://ns.adobe.com/xap/1.0/"
        xmlns:xmpidq="http://ns.adobe.com/xmp/Identifier/qual/1.0/"
        xmlns:prism="http://prismstandard.org/namespaces/basic/2.0/"
        xmlns:pdf="http://ns.adobe.com/pdf/1.3/"
        xmlns:calibre="http://calibre-ebook.com/xmp-namespace"
        xmlns:calibreSI="http://calibre-ebook.com/xmp-namespace-series-index"
        xmlns:booklore="http://booklore.org/metadata/1.0/">
${body}
    </rdf:Description>
  </rdf:RDF>
</x:xmpmeta>
<?xpacket end="w"?>`;
}

// --- Encrypted PDFs (standard security handler, revision 2, 40-bit RC4) ---

const PASSWORD_PADDING = Buffer.from('28BF4E5E4E758A4164004E56FFFA01082E2E00B6D0683E802F0CA9FE6453697A', 'hex');

function rc4(key: Buffer, data: Buffer): Buffer {
  const s = Array.from({ length: 256 }, (_, i) => i);
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + s[i]! + key[i % key.length]!) & 255;
    [s[i], s[j]] = [s[j]!, s[i]!];
  }
  const out = Buffer.alloc(data.length);
  for (let n = 0, i = 0, j = 0; n < data.length; n++) {
    i = (i + 1) & 255;
    j = (j + s[i]!) & 255;
    [s[i], s[j]] = [s[j]!, s[i]!];
    out[n] = data[n]! ^ s[(s[i]! + s[j]!) & 255]!;
  }
  return out;
}

const md5 = (...parts: Buffer[]): Buffer => createHash('md5').update(Buffer.concat(parts)).digest();
const padPassword = (password: string): Buffer => Buffer.concat([Buffer.from(password, 'latin1'), PASSWORD_PADDING]).subarray(0, 32);

/**
 * A one-page PDF encrypted with RC4-40. With an empty user password any reader opens it (only the owner password
 * restricts permissions); with a user password it cannot be read without it.
 */
export function buildEncryptedPdf(options: { userPassword: string; ownerPassword: string; title: string; fill: [number, number, number] }): Buffer {
  const permissions = -4;
  const fileId = Buffer.from('0123456789abcdef0123456789abcdef', 'hex');
  const ownerKey = md5(padPassword(options.ownerPassword || options.userPassword)).subarray(0, 5);
  const o = rc4(ownerKey, padPassword(options.userPassword));
  const p = Buffer.alloc(4);
  p.writeInt32LE(permissions);
  const fileKey = md5(padPassword(options.userPassword), o, p, fileId).subarray(0, 5);
  const u = rc4(fileKey, PASSWORD_PADDING);
  const objectKey = (num: number): Buffer => md5(fileKey, Buffer.from([num & 255, (num >> 8) & 255, (num >> 16) & 255, 0, 0])).subarray(0, 10);

  const content = Buffer.from(`${options.fill.join(' ')} rg 0 0 200 300 re f`, 'latin1');
  const encryptedContent = rc4(objectKey(4), content);
  const encryptedTitle = rc4(objectKey(5), Buffer.from(options.title, 'latin1'));

  const objects: Buffer[] = [
    Buffer.from('<< /Type /Catalog /Pages 2 0 R >>'),
    Buffer.from('<< /Type /Pages /Kids [3 0 R] /Count 1 >>'),
    Buffer.from('<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 300] /Contents 4 0 R /Resources << >> >>'),
    Buffer.concat([Buffer.from(`<< /Length ${encryptedContent.length} >>\nstream\n`), encryptedContent, Buffer.from('\nendstream')]),
    Buffer.from(`<< /Title <${encryptedTitle.toString('hex')}> >>`),
    Buffer.from(`<< /Filter /Standard /V 1 /R 2 /O <${o.toString('hex')}> /U <${u.toString('hex')}> /P ${permissions} >>`),
  ];
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n%\xE2\xE3\xCF\xD3\n', 'latin1')];
  const offsets: number[] = [];
  let length = parts[0]!.length;
  objects.forEach((body, i) => {
    offsets.push(length);
    const chunk = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), body, Buffer.from('\nendobj\n')]);
    parts.push(chunk);
    length += chunk.length;
  });
  const xref = [`xref\n0 ${objects.length + 1}\n`, '0000000000 65535 f \n', ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`)].join('');
  const id = fileId.toString('hex');
  const trailer = `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R /Info 5 0 R /Encrypt 6 0 R /ID [<${id}> <${id}>] >>\nstartxref\n${length}\n%%EOF\n`;
  parts.push(Buffer.from(xref + trailer, 'latin1'));
  return Buffer.concat(parts);
}

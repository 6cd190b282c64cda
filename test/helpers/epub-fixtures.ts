// Builds EPUB files (and broken look-alikes) on disk for the extractor tests; nothing binary is committed.
import fs from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import sharp from 'sharp';
import yazl from 'yazl';

export { makeTempDir, type TempDir } from './temp-dir.ts';

export interface ZipEntrySpec {
  name: string;
  data: Buffer | string;
  /** Deflate the entry (default true); EPUB's `mimetype` must be stored. */
  compress?: boolean;
}

function buildZip(entries: ZipEntrySpec[]): yazl.ZipFile {
  const zip = new yazl.ZipFile();
  for (const entry of entries) {
    const data = typeof entry.data === 'string' ? Buffer.from(entry.data, 'utf8') : entry.data;
    zip.addBuffer(data, entry.name, { compress: entry.compress ?? true });
  }
  zip.end();
  return zip;
}

export async function writeZip(file: string, entries: ZipEntrySpec[]): Promise<void> {
  await pipeline(buildZip(entries).outputStream, fs.createWriteStream(file));
}

async function zipToBuffer(entries: ZipEntrySpec[]): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of buildZip(entries).outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Writes a zip whose entry names yazl would refuse (`../x`, `/etc/passwd`): each entry is written under a harmless
 * placeholder of the same length, then the placeholder bytes are swapped for the hostile name in the local and
 * central headers.
 */
export async function writeZipWithHostileNames(file: string, entries: ZipEntrySpec[]): Promise<void> {
  const placeholders = entries.map((entry, i) => {
    const stem = `p${i}_`;
    return (stem + 'x'.repeat(Math.max(0, entry.name.length - stem.length))).slice(0, entry.name.length);
  });
  let bytes = await zipToBuffer(entries.map((entry, i) => ({ ...entry, name: placeholders[i] ?? entry.name })));
  entries.forEach((entry, i) => {
    const from = Buffer.from(placeholders[i] ?? '', 'utf8');
    const to = Buffer.from(entry.name, 'utf8');
    for (let at = bytes.indexOf(from); at !== -1; at = bytes.indexOf(from, at + to.length)) {
      bytes = Buffer.concat([bytes.subarray(0, at), to, bytes.subarray(at + from.length)]);
    }
  });
  fs.writeFileSync(file, bytes);
}

/** A zip with the given regular entries plus one entry inflating to `zeroBytes` zeros, streamed (never in memory). */
export async function writeZipBomb(file: string, entries: ZipEntrySpec[], bombName: string, zeroBytes: number): Promise<void> {
  const zip = new yazl.ZipFile();
  for (const entry of entries) zip.addBuffer(typeof entry.data === 'string' ? Buffer.from(entry.data) : entry.data, entry.name);
  const chunk = Buffer.alloc(1024 * 1024);
  async function* zeros(): AsyncGenerator<Buffer> {
    for (let left = zeroBytes; left > 0; left -= chunk.length) yield left >= chunk.length ? chunk : chunk.subarray(0, left);
  }
  zip.addReadStream(Readable.from(zeros()), bombName, { compress: true });
  zip.end();
  await pipeline(zip.outputStream, fs.createWriteStream(file));
}

export function containerXml(opfPath: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles><rootfile full-path="${opfPath}" media-type="application/oebps-package+xml"/></rootfiles>
</container>`;
}

export interface OpfParts {
  version?: '2.0' | '3.0';
  metadata: string;
  manifest: string;
  spine?: string;
  guide?: string;
}

export function opfDocument(parts: OpfParts): string {
  return `<?xml version="1.0" encoding="utf-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="${parts.version ?? '3.0'}" unique-identifier="bookid">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:opf="http://www.idpf.org/2007/opf">
${parts.metadata}
  </metadata>
  <manifest>
${parts.manifest}
  </manifest>
  <spine>
${parts.spine ?? ''}
  </spine>
${parts.guide ? `<guide>${parts.guide}</guide>` : ''}
</package>`;
}

export function xhtmlPage(body: string, title = 'Page'): string {
  return `<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:xlink="http://www.w3.org/1999/xlink">
<head><title>${title}</title></head>
<body>${body}</body>
</html>`;
}

export interface EpubSpec {
  opf: string;
  opfPath?: string;
  /** Other entries by name (chapters, images, META-INF side files). */
  files?: Record<string, Buffer | string>;
  /** Custom container.xml, or false to leave it out. */
  container?: string | false;
}

export async function writeEpub(file: string, spec: EpubSpec): Promise<void> {
  const opfPath = spec.opfPath ?? 'OEBPS/content.opf';
  const entries: ZipEntrySpec[] = [{ name: 'mimetype', data: 'application/epub+zip', compress: false }];
  if (spec.container !== false) entries.push({ name: 'META-INF/container.xml', data: spec.container ?? containerXml(opfPath) });
  entries.push({ name: opfPath, data: spec.opf });
  for (const [name, data] of Object.entries(spec.files ?? {})) entries.push({ name, data });
  await writeZip(file, entries);
}

export function jpeg(width: number, height: number, background = '#c33'): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background } }).jpeg().toBuffer();
}

export function png(width: number, height: number, background = '#36c'): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background } }).png().toBuffer();
}

import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { PDFDocument, PDFName } from 'pdf-lib';
import { afterAll, describe, expect, it } from 'vitest';
import { extractPdf } from '../../src/core/formats/pdf.ts';
import { writeMetadataToFile, type FileMetadata } from '../../src/core/metadata/write-back/index.ts';
import { makeTempDir } from '../helpers/temp-dir.ts';
import { buildPdf, xmpPacket } from '../helpers/pdf-fixtures.ts';

const tmp = makeTempDir('bindery-wb-pdf-');
afterAll(() => tmp.remove());

const meta = (overrides: Partial<FileMetadata> = {}): FileMetadata => ({
  title: 'Gödel, Escher, Bach',
  subtitle: 'an Eternal Golden Braid',
  authors: ['Douglas R. Hofstadter'],
  publisher: 'Basic Books',
  publishedDate: '1979-01-01',
  description: 'A metaphorical fugue on minds and machines (in the spirit of Lewis Carroll).',
  language: 'en',
  isbn13: '9780465026562',
  isbn10: undefined,
  asin: 'B00ARGSDIG',
  goodreadsId: '24113',
  googleId: undefined,
  hardcoverId: undefined,
  seriesName: 'Pulitzer Winners',
  seriesNumber: 1980,
  seriesTotal: 2000,
  categories: ['Mathematics', 'Philosophy', 'favourite'],
  tags: ['favourite'],
  ...overrides,
});

async function classicPdf(name: string): Promise<string> {
  const file = tmp.file(name);
  writeFileSync(file, await buildPdf({ title: 'Old Title', author: 'Old Author', subject: 'Old subject', keywords: ['old'], customInfo: { Producer: 'TestProducer', EBX_PUBLISHER: 'Old Pub' }, pages: 3, xmp: xmpPacket('<xmp:CreatorTool>Scribe 1.0</xmp:CreatorTool><dc:title><rdf:Alt><rdf:li xml:lang="x-default">Old XMP Title</rdf:li></rdf:Alt></dc:title>') }));
  return file;
}

/** A PDF 1.5 file with object streams and a compressed cross-reference stream (pdf-lib's default save). */
async function streamPdf(name: string): Promise<string> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  doc.setTitle('Stream Title');
  doc.setAuthor('Stream Author');
  for (let i = 0; i < 4; i++) doc.addPage([300, 400]);
  const file = tmp.file(name);
  writeFileSync(file, await doc.save({ useObjectStreams: true }));
  return file;
}

describe('PDF write-back', () => {
  it('appends an incremental update that reads back as written, leaving the original bytes as they were', async () => {
    const file = await classicPdf('classic.pdf');
    const original = readFileSync(file);
    expect(await writeMetadataToFile(file, 'pdf', meta())).toEqual({ status: 'written' });
    const updated = readFileSync(file);
    expect(updated.length).toBeGreaterThan(original.length);
    expect(updated.subarray(0, original.length).equals(original)).toBe(true);
    const tail = updated.subarray(original.length).toString('latin1');
    expect(tail).toContain('/Prev ');
    expect(tail.trimEnd().endsWith('%%EOF')).toBe(true);

    const x = await extractPdf(file, { skipCover: true });
    expect(x.metadata).toMatchObject({
      title: 'Gödel, Escher, Bach',
      subtitle: 'an Eternal Golden Braid',
      authors: ['Douglas R. Hofstadter'],
      publisher: 'Basic Books',
      publishedDate: '1979-01-01',
      description: 'A metaphorical fugue on minds and machines (in the spirit of Lewis Carroll).',
      language: 'en',
      isbn13: '9780465026562',
      asin: 'B00ARGSDIG',
      goodreadsId: '24113',
      seriesName: 'Pulitzer Winners',
      seriesNumber: 1980,
      seriesTotal: 2000,
      categories: ['Mathematics', 'Philosophy'],
      tags: ['favourite'],
      pageCount: 3,
    });

    // Other readers see the same: pdf-lib follows /Prev and finds the new Info, the old entries it did not own kept.
    const reread = await PDFDocument.load(updated, { updateMetadata: false });
    expect(reread.getTitle()).toBe('Gödel, Escher, Bach');
    expect(reread.getAuthor()).toBe('Douglas R. Hofstadter');
    expect(reread.getPageCount()).toBe(3);
    expect(reread.getProducer()).toBe('TestProducer');
    expect(reread.catalog.get(PDFName.of('Metadata'))).toBeDefined();
    // The old XMP's producing tool is carried into the new packet.
    expect(tail).toContain('<xmp:CreatorTool>Scribe 1.0</xmp:CreatorTool>');
  });

  it('saving the same metadata again changes nothing; a change appends one more update', async () => {
    const file = await classicPdf('stable.pdf');
    await writeMetadataToFile(file, 'pdf', meta());
    const first = readFileSync(file);
    const mtime = statSync(file).mtimeMs;
    expect(await writeMetadataToFile(file, 'pdf', meta())).toEqual({ status: 'unchanged' });
    expect(readFileSync(file).equals(first)).toBe(true);
    expect(statSync(file).mtimeMs).toBe(mtime);

    expect(await writeMetadataToFile(file, 'pdf', meta({ title: 'Second' }))).toEqual({ status: 'written' });
    const second = readFileSync(file);
    expect(second.subarray(0, first.length).equals(first)).toBe(true);
    expect((await extractPdf(file, { skipCover: true })).metadata.title).toBe('Second');
    expect(await writeMetadataToFile(file, 'pdf', meta({ title: 'Second' }))).toEqual({ status: 'unchanged' });
  });

  it('updates files with object streams and cross-reference streams with a cross-reference stream', async () => {
    const file = await streamPdf('streams.pdf');
    const original = readFileSync(file);
    expect(original.toString('latin1')).toContain('/ObjStm');
    await writeMetadataToFile(file, 'pdf', meta({ title: 'Streamed' }));
    const updated = readFileSync(file);
    expect(updated.subarray(0, original.length).equals(original)).toBe(true);
    expect(updated.subarray(original.length).toString('latin1')).toContain('/Type /XRef');
    const x = await extractPdf(file, { skipCover: true });
    expect(x.metadata.title).toBe('Streamed');
    expect(x.metadata.authors).toEqual(['Douglas R. Hofstadter']);
    expect(x.metadata.pageCount).toBe(4);
    const reread = await PDFDocument.load(updated, { updateMetadata: false });
    expect(reread.getPageCount()).toBe(4);
    expect(reread.getTitle()).toBe('Streamed');
    expect(await writeMetadataToFile(file, 'pdf', meta({ title: 'Streamed' }))).toEqual({ status: 'unchanged' });
  });

  it('clears what the catalog cleared, from the XMP and the Info dictionary alike', async () => {
    const file = await classicPdf('cleared.pdf');
    await writeMetadataToFile(file, 'pdf', meta({ authors: [], description: undefined, categories: [], tags: [], publisher: undefined, seriesName: undefined }));
    const x = await extractPdf(file, { skipCover: true });
    expect(x.metadata.authors).toEqual([]);
    expect(x.metadata.description).toBeUndefined();
    expect(x.metadata.categories).toEqual([]);
    expect(x.metadata.publisher).toBeUndefined();
    expect(x.metadata.seriesName).toBeUndefined();
  });

  it('leaves the original untouched on any failure, and respects the size limit', async () => {
    const file = await classicPdf('fail.pdf');
    const original = readFileSync(file);
    await expect(writeMetadataToFile(file, 'pdf', meta(), { hooks: { afterTempWritten: () => { throw new Error('power cut'); } } })).rejects.toThrow('power cut');
    expect(readFileSync(file).equals(original)).toBe(true);
    await expect(writeMetadataToFile(file, 'pdf', meta(), { hooks: { afterTempWritten: (temp) => writeFileSync(temp, original.subarray(0, 200)) } })).rejects.toMatchObject({ code: 'VERIFY_FAILED' });
    expect(readFileSync(file).equals(original)).toBe(true);
    expect(await writeMetadataToFile(file, 'pdf', meta(), { maxFileBytes: 100 })).toMatchObject({ status: 'skipped' });
    expect(readFileSync(file).equals(original)).toBe(true);
    expect(readdirSync(tmp.dir).filter((n) => n.includes('.bindery-'))).toEqual([]);
  });

  it('refuses encrypted, damaged and non-PDF files without touching them', async () => {
    const { buildEncryptedPdf } = await import('../helpers/pdf-fixtures.ts');
    const encrypted = tmp.file('encrypted.pdf');
    writeFileSync(encrypted, buildEncryptedPdf({ userPassword: '', ownerPassword: 'owner', title: 'Secret', fill: [1, 0, 0] }));
    const encryptedBytes = readFileSync(encrypted);
    await expect(writeMetadataToFile(encrypted, 'pdf', meta())).rejects.toMatchObject({ code: 'UNSUPPORTED' });
    expect(readFileSync(encrypted).equals(encryptedBytes)).toBe(true);

    const damaged = tmp.file('damaged.pdf');
    const good = await buildPdf({ title: 'x' });
    const broken = Buffer.from(good);
    const at = broken.lastIndexOf('startxref');
    broken.write('startxref\n9999999\n%%EOF\n', at, 'latin1');
    writeFileSync(damaged, broken.subarray(0, at + 24));
    const damagedBytes = readFileSync(damaged);
    await expect(writeMetadataToFile(damaged, 'pdf', meta())).rejects.toMatchObject({ code: 'UNSUPPORTED' });
    expect(readFileSync(damaged).equals(damagedBytes)).toBe(true);

    const junk = tmp.file('junk.pdf');
    writeFileSync(junk, 'this is not a PDF at all, just text');
    await expect(writeMetadataToFile(junk, 'pdf', meta())).rejects.toMatchObject({ code: 'UNSUPPORTED' });
  });
});

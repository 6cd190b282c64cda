// The ZIP reader in both of its modes: through the thread pool (the default) and with blocking reads (scan workers).
import { writeFileSync } from 'node:fs';
import yazl from 'yazl';
import { afterAll, describe, expect, it } from 'vitest';
import { ZipArchive, withZip } from '../../src/core/formats/zip.ts';
import { makeTempDir, writeZipBomb, writeZipWithHostileNames } from '../helpers/epub-fixtures.ts';
import { expectFormatError } from '../helpers/format-assertions.ts';

const tmp = makeTempDir('bindery-zip-');
afterAll(() => tmp.remove());

interface Entry {
  name: string;
  data: Buffer | string;
  compress?: boolean;
}

async function zipBytes(entries: Entry[], options: { zip64?: boolean; comment?: string } = {}): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const e of entries) {
    zip.addBuffer(Buffer.from(e.data), e.name, { compress: e.compress ?? true, forceZip64Format: options.zip64 ?? false });
  }
  zip.end({ forceZip64Format: options.zip64 ?? false, comment: options.comment ?? '' });
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

function save(name: string, bytes: Buffer): string {
  const path = tmp.file(name);
  writeFileSync(path, bytes);
  return path;
}

const text = 'Some text of a chapter. '.repeat(400);
const big = Buffer.alloc(200 * 1024, 7);
const sample: Entry[] = [
  { name: 'mimetype', data: 'application/epub+zip', compress: false },
  { name: 'OEBPS/chapter.xhtml', data: text },
  { name: 'OEBPS/image.bin', data: big, compress: false },
  { name: 'OEBPS/ünïcode name.txt', data: 'ok' },
  { name: 'OEBPS/empty.txt', data: '' },
];

for (const blocking of [false, true]) {
  describe(`ZipArchive (${blocking ? 'blocking reads' : 'thread pool'})`, () => {
    const open = (path: string): Promise<ZipArchive> => ZipArchive.open(path, { blocking });

    it('lists and reads stored and deflated entries, small archives and large ones', async () => {
      for (const [name, bytes] of [
        ['small.zip', await zipBytes(sample.filter((e) => e.name !== 'OEBPS/image.bin'))],
        ['large.zip', await zipBytes(sample)],
        ['commented.zip', await zipBytes(sample, { comment: 'a comment at the very end' })],
        ['zip64.zip', await zipBytes(sample, { zip64: true })],
      ] as const) {
        const entries = await withZip(save(name, bytes), async (zip) => {
          expect(await zip.readText('mimetype')).toBe('application/epub+zip');
          expect(await zip.readText('OEBPS/chapter.xhtml')).toBe(text);
          expect(await zip.readText('OEBPS/ünïcode name.txt')).toBe('ok');
          expect((await zip.read('OEBPS/empty.txt')).length).toBe(0);
          if (zip.has('OEBPS/image.bin')) expect((await zip.read('OEBPS/image.bin')).equals(big)).toBe(true);
          expect(zip.find('oebps/CHAPTER.xhtml')?.name).toBe('OEBPS/chapter.xhtml');
          return zip.entries;
        }, { blocking });
        expect(entries.find((e) => e.name === 'OEBPS/chapter.xhtml')).toMatchObject({ size: Buffer.byteLength(text), isDirectory: false });
      }
    });

    it('refuses entry names that climb out or are absolute as UNSAFE', async () => {
      const climbing = tmp.file(`climb-${blocking}.zip`);
      await writeZipWithHostileNames(climbing, [{ name: 'ok.txt', data: 'x' }, { name: '../../evil.txt', data: 'owned' }]);
      await expectFormatError(open(climbing), 'UNSAFE');
      const absolute = tmp.file(`absolute-${blocking}.zip`);
      await writeZipWithHostileNames(absolute, [{ name: '/etc/passwd', data: 'root' }]);
      await expectFormatError(open(absolute), 'UNSAFE');
    });

    it('refuses a bomb while indexing, and an entry bigger than the caller allows', async () => {
      const bomb = tmp.file(`bomb-${blocking}.zip`);
      await writeZipBomb(bomb, [{ name: 'a.txt', data: 'a' }], 'zeros.bin', 64 * 1024 * 1024);
      await expectFormatError(open(bomb), 'TOO_LARGE', /zeros\.bin/);
      const zip = await open(save(`cap-${blocking}.zip`, await zipBytes(sample)));
      try {
        await expectFormatError(zip.read('OEBPS/chapter.xhtml', 100), 'TOO_LARGE');
      } finally {
        zip.close();
      }
    });

    it('calls an entry whose data lies about its size CORRUPT', async () => {
      const bytes = await zipBytes([{ name: 'a.txt', data: text }]);
      // Shrink the declared size in the central directory (offset 24 of its header): the data inflates past it.
      const central = bytes.lastIndexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
      const lying = Buffer.from(bytes);
      lying.writeUInt32LE(100, central + 24);
      const zip = await open(save(`lying-${blocking}.zip`, lying));
      try {
        await expectFormatError(zip.read('a.txt'), 'CORRUPT', /declared/);
      } finally {
        zip.close();
      }
    });

    it('calls truncated or foreign bytes CORRUPT, and a missing file IO', async () => {
      const whole = await zipBytes(sample);
      await expectFormatError(open(save(`truncated-${blocking}.zip`, whole.subarray(0, whole.length - 30))), 'CORRUPT');
      await expectFormatError(open(save(`text-${blocking}.zip`, Buffer.from('not a zip at all\n'.repeat(100)))), 'CORRUPT');
      await expectFormatError(open(save(`empty-${blocking}.zip`, Buffer.alloc(0))), 'CORRUPT');
      await expectFormatError(open(tmp.file('missing.zip')), 'IO');
    });
  });
}

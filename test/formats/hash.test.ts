import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { fileFingerprints, partialMd5 } from '../../src/core/formats/hash.ts';
import { makeTempDir } from '../helpers/temp-dir.ts';

const tmp = makeTempDir('bindery-hash-');
afterAll(() => tmp.remove());

/** `fileFingerprints` of each path, computed on a worker thread (where every file is read with blocking calls). */
function fingerprintsOnWorker(paths: string[]): Promise<unknown> {
  const hashModule = new URL('../../src/core/formats/hash.ts', import.meta.url).href;
  const code = `import { parentPort, workerData } from 'node:worker_threads';
const { fileFingerprints } = await import(${JSON.stringify(hashModule)});
const results = [];
for (const path of workerData) results.push(await fileFingerprints(path));
parentPort.postMessage(results);`;
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(code)}`), { workerData: paths });
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

describe('fileFingerprints', () => {
  it('gives the same SHA-256 and partial MD5 on a worker thread as on the main thread, for files of one and several buffers', async () => {
    const paths = [100, 1024 * 1024 - 1, 1024 * 1024, 5 * 1024 * 1024 + 333].map((size, i) => {
      const bytes = Buffer.alloc(size);
      for (let j = 0; j < size; j++) bytes[j] = (j * 31 + (j >>> 11)) & 0xff;
      const path = join(tmp.dir, `file-${i}.bin`);
      writeFileSync(path, bytes);
      return path;
    });
    const onMain = [];
    for (const path of paths) {
      const prints = await fileFingerprints(path);
      expect(prints.contentHash).toBe(createHash('sha256').update(readFileSync(path)).digest('hex'));
      expect(prints.partialMd5).toBe(await partialMd5(path));
      onMain.push(prints);
    }
    expect(await fingerprintsOnWorker(paths)).toEqual(onMain);
  });
});

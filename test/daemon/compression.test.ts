// Response compression: negotiated zstd / br / gzip for JSON, XML, HTML, JS, CSS and wasm (the streamed full book
// list included), never for downloads, ranged media or tiny bodies; web UI assets sent from copies compressed once and
// made again when the file changes; all of it off with compressResponses=false.
import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLibrary } from '../../src/core/libraries/libraries.ts';
import { scanLibrary } from '../../src/core/scan/scanner.ts';
import { FIRST_LEVELS, LIVE_LEVELS, negotiateEncoding, SUPPORTED_ENCODINGS } from '../../src/daemon/compression.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  raw: Buffer;
}

/** A real HTTP request, bytes as they came over the wire (no client-side decoding). */
function get(port: number, path: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, raw: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

function decode(answer: Answer): Buffer {
  switch (answer.headers['content-encoding']) {
    case 'br':
      return zlib.brotliDecompressSync(answer.raw);
    case 'gzip':
      return zlib.gunzipSync(answer.raw);
    case 'zstd':
      return zlib.zstdDecompressSync(answer.raw);
    default:
      return answer.raw;
  }
}

const BUNDLE = `${'export const books = ['.padEnd(40, ' ')}${Array.from({ length: 3000 }, (_, i) => `{"id":${i},"title":"Book ${i}"}`).join(',')}];\n`;

describe('negotiation', () => {
  it('takes the highest weight, the server’s order on ties, and nothing for identity or q=0', () => {
    expect(negotiateEncoding('gzip, deflate, br, zstd')).toBe(SUPPORTED_ENCODINGS[0]);
    expect(negotiateEncoding('gzip, br')).toBe('br');
    expect(negotiateEncoding('br;q=0.5, gzip')).toBe('gzip');
    expect(negotiateEncoding('br;q=0, gzip;q=0')).toBeUndefined();
    expect(negotiateEncoding('identity')).toBeUndefined();
    expect(negotiateEncoding(undefined)).toBeUndefined();
    expect(negotiateEncoding('*;q=0.1, gzip;q=0')).toBe(SUPPORTED_ENCODINGS[0]);
  });

  it('answers a header asked for again as the first time, past the remembered ones too, and weighs another list on its own', () => {
    for (let round = 0; round < 3; round++) {
      expect(negotiateEncoding('gzip, br')).toBe('br');
      expect(negotiateEncoding('identity')).toBeUndefined();
      expect(negotiateEncoding('gzip, br', ['gzip'])).toBe('gzip');
      // More distinct headers than are remembered.
      for (let i = 0; i < 100; i++) expect(negotiateEncoding(`gzip;q=0.${(i % 9) + 1}, x-${i}`)).toBe('gzip');
    }
  });
});

describe('compressed answers', () => {
  let d: TestDaemon;
  let lib: TempLibrary;
  let web: string;
  let port: number;
  let token: string;
  let bookId: number;

  beforeAll(async () => {
    web = mkdtempSync(join(tmpdir(), 'bindery-web-compress-'));
    writeFileSync(join(web, 'index.html'), '<!doctype html><html><body><app-root></app-root></body></html>');
    writeFileSync(join(web, 'main.abcdef123456.js'), BUNDLE);
    d = await startTestDaemon({ webRoot: web });
    lib = makeTempLibrary();
    for (let i = 0; i < 30; i++) await writeSimpleEpub(lib.path('books', `book-${i}.epub`), { title: `Book number ${i}`, authors: ['Some Author'], body: 'x'.repeat(5000) });
    const library = await createLibrary(d.store.db, { name: 'Books', paths: [lib.path('books')] });
    await scanLibrary(d.store, library, { coversRoot: d.ctx.paths.covers, workers: 0 });
    bookId = (await d.store.db.selectFrom('book').select('id').executeTakeFirstOrThrow()).id;
    token = await d.setupAdmin();
    await d.app.listen({ port: 0, host: '127.0.0.1' });
    const address = d.app.server.address();
    port = typeof address === 'object' && address ? address.port : 0;
  });

  afterAll(async () => {
    await d?.close();
    lib?.cleanup();
    rmSync(web, { recursive: true, force: true });
  });

  it('streams the full book list in each encoding the client offers, decoding to the same JSON', async () => {
    const auth = { authorization: `Bearer ${token}` };
    const plain = await get(port, '/api/v1/books?stripForListView=false', auth);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect((JSON.parse(plain.raw.toString()) as unknown[]).length).toBe(30);
    for (const encoding of SUPPORTED_ENCODINGS) {
      const res = await get(port, '/api/v1/books?stripForListView=false', { ...auth, 'accept-encoding': encoding });
      expect(res.status).toBe(200);
      expect(res.headers['content-encoding']).toBe(encoding);
      expect(res.headers.vary).toMatch(/Accept-Encoding/i);
      expect(res.raw.length).toBeLessThan(plain.raw.length / 3);
      expect(decode(res).equals(plain.raw)).toBe(true);
    }
  });

  it('compresses buffered JSON with an exact length, but not bodies under 1 KiB', async () => {
    const auth = { authorization: `Bearer ${token}`, 'accept-encoding': 'gzip' };
    const book = await get(port, `/api/v1/books/${bookId}?withDescription=true`, auth);
    expect(book.headers['content-encoding']).toBe('gzip');
    expect(Number(book.headers['content-length'])).toBe(book.raw.length);
    expect((JSON.parse(decode(book).toString()) as { id: number }).id).toBe(bookId);
    const small = await get(port, '/api/v1/healthcheck', auth);
    expect(small.headers['content-encoding']).toBeUndefined();
  });

  it('sends a kept page from a fast copy, made again at the live level once the page is asked for a third time', async () => {
    const auth = { authorization: `Bearer ${token}` };
    const pages: [Encoding: 'gzip' | 'br', compress: (body: Buffer, options: zlib.ZlibOptions & zlib.BrotliOptions) => Buffer][] = [
      ['gzip', (body, options) => zlib.gzipSync(body, options)],
      ['br', (body, options) => zlib.brotliCompressSync(body, options)],
    ];
    for (const [index, [encoding, compress]] of pages.entries()) {
      const path = `/api/v1/app/books?page=0&size=${40 + index}`;
      const first = await get(port, path, { ...auth, 'accept-encoding': encoding });
      expect(first.headers['content-encoding']).toBe(encoding);
      const plain = await get(port, path, auth);
      expect(plain.raw.length).toBeGreaterThan(1024);
      expect(first.raw.equals(compress(plain.raw, FIRST_LEVELS[encoding]))).toBe(true);
      // Asked for again, and a third time: still the fast copy; the better one is made for the answers after.
      for (let i = 0; i < 2; i++) {
        const again = await get(port, path, { ...auth, 'accept-encoding': encoding });
        expect(again.raw.equals(first.raw)).toBe(true);
        expect(Number(again.headers['content-length'])).toBe(again.raw.length);
      }
      const better = compress(plain.raw, LIVE_LEVELS[encoding]);
      expect(better.length).toBeLessThan(first.raw.length);
      await vi.waitFor(async () => expect((await get(port, path, { ...auth, 'accept-encoding': encoding })).raw.equals(better)).toBe(true));
      const kept = await get(port, path, { ...auth, 'accept-encoding': encoding });
      expect(kept.headers['content-encoding']).toBe(encoding);
      expect(Number(kept.headers['content-length'])).toBe(kept.raw.length);
    }
  });

  it('never compresses a download, whole or ranged', async () => {
    const auth = { authorization: `Bearer ${token}`, 'accept-encoding': 'gzip, br, zstd' };
    const whole = await get(port, `/api/v1/books/${bookId}/download`, auth);
    expect(whole.status).toBe(200);
    expect(whole.headers['content-encoding']).toBeUndefined();
    expect(whole.raw.subarray(0, 2).toString()).toBe('PK');
    const ranged = await get(port, `/api/v1/books/${bookId}/content`, { ...auth, range: 'bytes=0-9' });
    expect(ranged.status).toBe(206);
    expect(ranged.headers['content-encoding']).toBeUndefined();
    expect(ranged.raw.length).toBe(10);
  });

  it('sends web UI assets from a copy compressed once, made again when the file changes; ranges get the file', async () => {
    const url = '/main.abcdef123456.js';
    const fetchUntilCompressed = async (encoding: string): Promise<Answer> => {
      for (let i = 0; i < 100; i++) {
        const res = await get(port, url, { 'accept-encoding': encoding });
        expect(res.status).toBe(200);
        if (res.headers['content-encoding'] === encoding) return res;
        // The first answer, while the copy is being made, is the file itself.
        expect(res.raw.toString()).toBe(readFileText());
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error('never compressed');
    };
    const readFileText = (): string => current;
    let current = BUNDLE;
    const br = await fetchUntilCompressed('br');
    expect(br.headers['content-type']).toBe('application/javascript; charset=utf-8');
    expect(br.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(br.headers['cross-origin-opener-policy']).toBe('same-origin');
    expect(Number(br.headers['content-length'])).toBe(br.raw.length);
    expect(decode(br).toString()).toBe(BUNDLE);
    const again = await get(port, url, { 'accept-encoding': 'br', 'if-none-match': String(br.headers.etag) });
    expect(again.status).toBe(304);
    expect(decode(await fetchUntilCompressed('gzip')).toString()).toBe(BUNDLE);

    const ranged = await get(port, url, { 'accept-encoding': 'br', range: 'bytes=0-5' });
    expect(ranged.status).toBe(206);
    expect(ranged.headers['content-encoding']).toBeUndefined();
    expect(ranged.raw.toString()).toBe(BUNDLE.slice(0, 6));

    // An upgraded UI: same name, new content.
    current = `${BUNDLE}export const more = 1;\n`;
    writeFileSync(join(web, 'main.abcdef123456.js'), current);
    utimesSync(join(web, 'main.abcdef123456.js'), new Date(), new Date(Date.now() + 5000));
    expect(decode(await fetchUntilCompressed('br')).toString()).toBe(current);
    const cached = readdirSync(join(d.ctx.paths.cache, 'web')).filter((n) => n.endsWith('.br'));
    expect(cached).toHaveLength(1);
  });
});

describe('compressResponses off', () => {
  it('sends everything as it is', async () => {
    const d = await startTestDaemon({ compressResponses: false });
    try {
      const token = await d.setupAdmin();
      const res = await d.inject({ method: 'GET', url: '/api/v1/settings', headers: { authorization: `Bearer ${token}`, 'accept-encoding': 'gzip, br' } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-encoding']).toBeUndefined();
    } finally {
      await d.close();
    }
  });
});

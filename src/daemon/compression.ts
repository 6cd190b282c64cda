// Response compression, negotiated from Accept-Encoding: zstd (when Node has it), br or gzip, for text-like types only
// (JSON, XML, HTML, JavaScript, CSS, wasm, SVG, plain text). Streamed bodies (the full book list is hundreds of MB of
// JSON) go through a compressing stream with backpressure, so memory stays bounded. Never compressed: downloads and
// ranged media (anything sent as an attachment or with Accept-Ranges), partial content, and answers that already
// carry an encoding (the precompressed web-UI assets, see web-root.ts). See docs/deploy.md.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { pipeline, type Readable, type Transform } from 'node:stream';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { RememberedAnswers } from '../core/remembered-answers.ts';
import { addToVary } from './vary.ts';

export type Encoding = 'zstd' | 'br' | 'gzip';

/** What Node can produce, in the server's order of preference: zstd is the cheapest per byte saved, gzip the fallback. */
export const SUPPORTED_ENCODINGS: readonly Encoding[] = typeof zlib.createZstdCompress === 'function' ? ['zstd', 'br', 'gzip'] : ['br', 'gzip'];

/** Bodies smaller than this are sent as they are: the encoding would save less than its framing costs. */
const THRESHOLD_BYTES = 1024;

const COMPRESSIBLE = /^(?:application\/(?:json|[\w.+-]+\+json|xml|[\w.+-]+\+xml|javascript|wasm|x-ndjson)|text\/(?:html|css|javascript|xml|plain|csv|markdown)|image\/svg\+xml)\s*(?:;|$)/i;

export function isCompressibleType(contentType: string | undefined): boolean {
  return contentType !== undefined && COMPRESSIBLE.test(contentType);
}

/**
 * The encoding to answer in: the acceptable one (q > 0) with the highest weight, ties broken by the server's order.
 * `*` stands for any encoding not named. Undefined means identity.
 */
export function negotiateEncoding(acceptEncoding: string | undefined, supported: readonly Encoding[] = SUPPORTED_ENCODINGS): Encoding | undefined {
  if (!acceptEncoding) return undefined;
  if (supported !== SUPPORTED_ENCODINGS) return weighEncodings(acceptEncoding, supported);
  return negotiated.get(acceptEncoding, weighEncodings, supported);
}

/**
 * The answers of negotiateEncoding for the server's own encodings, by header: a client sends the same Accept-Encoding
 * with every request, and weighing it anew allocated ~0.5 KB of a kept page's ~18 KB (docs/benchmarks.md, "Session 10:
 * fairness"). Cleared when full (headers are few in practice; a client sending a new one each time gains nothing).
 */
const negotiated = new RememberedAnswers<string, Encoding | undefined>(64);

function weighEncodings(acceptEncoding: string, supported: readonly Encoding[]): Encoding | undefined {
  const weights = new Map<string, number>();
  for (const part of acceptEncoding.split(',')) {
    const [name, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    if (!name) continue;
    const q = params.find((p) => p.startsWith('q='));
    const weight = q ? Number(q.slice(2)) : 1;
    weights.set(name, Number.isFinite(weight) ? weight : 0);
  }
  let best: Encoding | undefined;
  let bestWeight = 0;
  for (const encoding of supported) {
    const weight = weights.get(encoding) ?? weights.get('*') ?? 0;
    if (weight > bestWeight) {
      best = encoding;
      bestWeight = weight;
    }
  }
  return best;
}

type ZlibOptions = zlib.ZlibOptions & zlib.BrotliOptions & zlib.ZstdOptions;

/** Answers compressed as they are sent: fast levels (the full book list streams hundreds of MB). */
export const LIVE_LEVELS: Record<Encoding, ZlibOptions> = {
  zstd: { params: { [zlib.constants.ZSTD_c_compressionLevel]: 3 } },
  br: { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4, [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT } },
  gzip: { level: 6 },
};

/**
 * The copy of a page just built (see page-cache.ts). A kept page is one caller's and lives until the catalog changes,
 * so most are sent once or twice: their copy is made fast (gzip 1 and brotli 1 cost about half of gzip 6 and brotli 4
 * for 11-16 % more bytes; zstd 3 is already the cheapest). A page asked for a third time is made again at the live
 * level for the answers after it. Figures: docs/benchmarks.md, "Session 7".
 */
export const FIRST_LEVELS: Record<Encoding, ZlibOptions> = {
  zstd: LIVE_LEVELS.zstd,
  br: { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1, [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT } },
  gzip: { level: 1 },
};

/** Files compressed once and kept (the web UI's assets): the smallest output, whatever it costs once. */
export const STORED_LEVELS: Record<Encoding, ZlibOptions> = {
  zstd: { params: { [zlib.constants.ZSTD_c_compressionLevel]: 19 } },
  br: { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: zlib.constants.BROTLI_MAX_QUALITY } },
  gzip: { level: zlib.constants.Z_BEST_COMPRESSION },
};

export function compressor(encoding: Encoding, options: ZlibOptions = LIVE_LEVELS[encoding]): Transform {
  switch (encoding) {
    case 'zstd':
      return zlib.createZstdCompress(options);
    case 'br':
      return zlib.createBrotliCompress(options);
    case 'gzip':
      return zlib.createGzip(options);
  }
}

// zstd only where this Node has it (SUPPORTED_ENCODINGS never offers it otherwise).
const ONE_SHOT = { zstd: typeof zlib.zstdCompress === 'function' ? promisify(zlib.zstdCompress) : undefined, br: promisify(zlib.brotliCompress), gzip: promisify(zlib.gzip) } as const;
const ONE_SHOT_SYNC = { zstd: typeof zlib.zstdCompressSync === 'function' ? zlib.zstdCompressSync : undefined, br: zlib.brotliCompressSync, gzip: zlib.gzipSync } as const;

/**
 * Bodies up to this size are compressed on the calling thread: a page of a feed (40-100 KiB) costs 0.1-0.6 ms either
 * way, and handing it to the thread pool adds ~0.1 ms of CPU (a stream object, the hand-over, the callback) to every
 * built page. Larger bodies (a Kobo sync page, 200 KiB and more) go to the pool, so no answer holds the event loop for
 * long.
 */
const SYNC_LIMIT_BYTES = 128 * 1024;

/**
 * A body marked with compressFast is compressed on the calling thread up to this size: gzip 1 takes about 0.25 ms of a
 * 200 KiB Kobo sync page there, while the pool's one-shot call costs twice that on this thread alone (its stream
 * plumbing) besides the pool thread's own work.
 */
const FAST_SYNC_LIMIT_BYTES = 1024 * 1024;

function compressBuffer(encoding: Encoding, body: Buffer, options: ZlibOptions = LIVE_LEVELS[encoding], syncLimit = SYNC_LIMIT_BYTES): Promise<Buffer> {
  if (body.length <= syncLimit) {
    try {
      return Promise.resolve((ONE_SHOT_SYNC[encoding] as (input: Buffer, options: ZlibOptions) => Buffer)(body, options));
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }
  return (ONE_SHOT[encoding] as (input: Buffer, options: ZlibOptions) => Promise<Buffer>)(body, options);
}

/** Answers sent from a page's fast copy before it is made again at the live level. */
const SENT_BEFORE_BETTER_COPY = 2;

interface CompressedCopy {
  bytes: Promise<Buffer>;
  /** The bytes once made: answers after that take them as they are, without a promise's turn. */
  made?: Buffer;
  /** Answers sent from this copy so far. */
  sent: number;
  /** At the live level, or being made again at it. */
  final: boolean;
  /** Its length once made, as told to the body's owner (0 before). */
  size: number;
}

/**
 * Bodies sent again as they are (kept feed pages): each one's compressed form per encoding, made at the first level
 * and made again at the live level once it has been sent SENT_BEFORE_BETTER_COPY times.
 */
const compressedCopies = new WeakMap<Buffer, Map<Encoding, CompressedCopy>>();

/** Per kept body: told how many bytes its compressed copies add or free, so that they count in its keeper's budget. */
const copyBytesListeners = new WeakMap<Buffer, (delta: number) => void>();

/**
 * Marks `body` as one that will be sent again unchanged: its compressed forms are then kept as long as it is, and
 * `onCopyBytes` (the first one given) is told the bytes each copy adds (and what a better copy adds or frees).
 */
export function keepCompressedCopies(body: Buffer, onCopyBytes?: (delta: number) => void): void {
  if (!compressedCopies.has(body)) compressedCopies.set(body, new Map());
  if (onCopyBytes && !copyBytesListeners.has(body)) copyBytesListeners.set(body, onCopyBytes);
}

/**
 * Bodies built for one answer that a client asks for many of in a row: a Kobo sync page (about 200 KiB of JSON, a
 * hundred pages for a 10,000-book shelf). They are compressed at the first levels: gzip 1 costs about 40 % of gzip 6
 * on such a page for about a third more bytes (a few percent of the JSON either way). Figures: docs/benchmarks.md,
 * "Session 8: Kobo sync pages".
 */
const compressedFast = new WeakSet<Buffer>();

/** Marks `body` (sent once) to be compressed at the fast first levels. */
export function compressFast(body: Buffer): Buffer {
  compressedFast.add(body);
  return body;
}

function compressedCopy(encoding: Encoding, body: Buffer): Buffer | Promise<Buffer> {
  const copies = compressedCopies.get(body);
  if (!copies) return compressedFast.has(body) ? compressBuffer(encoding, body, FIRST_LEVELS[encoding], FAST_SYNC_LIMIT_BYTES) : compressBuffer(encoding, body);
  const copy = copies.get(encoding);
  if (!copy) {
    const first: CompressedCopy = { bytes: compressBuffer(encoding, body, FIRST_LEVELS[encoding]), sent: 1, final: FIRST_LEVELS[encoding] === LIVE_LEVELS[encoding], size: 0 };
    copies.set(encoding, first);
    first.bytes.then(
      (bytes) => {
        if (copies.get(encoding) !== first) return;
        first.made = bytes;
        first.size = bytes.length;
        copyBytesListeners.get(body)?.(bytes.length);
      },
      () => {
        if (copies.get(encoding) === first) copies.delete(encoding);
      },
    );
    return first.bytes;
  }
  if (!copy.final && copy.sent++ >= SENT_BEFORE_BETTER_COPY) {
    // Asked for once more: this answer gets the fast copy at once, the ones after it the smaller one.
    copy.final = true;
    // On the thread pool, whatever the body's size: nobody waits for the better copy, and on the event loop the kept
    // pages asked for a third time in a burst (a load of clients paging through them) queued their compressions
    // ahead of every request, 0.1-0.6 ms each.
    compressBuffer(encoding, body, LIVE_LEVELS[encoding], 0).then(
      (bytes) => {
        if (copies.get(encoding) !== copy) return;
        copies.set(encoding, { bytes: Promise.resolve(bytes), made: bytes, sent: copy.sent, final: true, size: bytes.length });
        copyBytesListeners.get(body)?.(bytes.length - copy.size);
      },
      () => undefined,
    );
  }
  return copy.made ?? copy.bytes;
}

function sendCompressed(reply: FastifyReply, encoding: Encoding, bytes: Buffer, done: (error: Error | null, payload?: unknown) => void): void {
  reply.header('content-encoding', encoding).header('content-length', bytes.length);
  done(null, bytes);
}

function isStream(payload: unknown): payload is Readable {
  return typeof payload === 'object' && payload !== null && typeof (payload as Readable).pipe === 'function';
}

/**
 * The onSend hook that compresses what may be compressed. Written with a callback rather than as an async function: a
 * kept page's compressed copy is sent in the same call, without the promise and the turn of the microtask queue an
 * async hook takes for every answer (a kept page costs ~0.05 ms; docs/benchmarks.md, "Session 10: fairness").
 */
export function registerCompression(app: FastifyInstance): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    if (payload === null || payload === undefined || request.method === 'HEAD') return done(null, payload);
    const status = reply.statusCode;
    if (status === 204 || status === 206 || status === 304 || status < 200) return done(null, payload);
    if (!isCompressibleType(reply.getHeader('content-type') as string | undefined)) return done(null, payload);
    const encodingHeader = reply.getHeader('content-encoding');
    if (encodingHeader !== undefined && encodingHeader !== 'identity') return done(null, payload);
    // Downloads and ranged media keep their bytes (and their byte offsets) as stored.
    if (reply.hasHeader('content-range') || reply.hasHeader('accept-ranges') || /^\s*attachment/i.test(String(reply.getHeader('content-disposition') ?? ''))) return done(null, payload);
    const encoding = negotiateEncoding(request.headers['accept-encoding']);
    // Header names in lower case, as fastify keeps them (it lower-cases each name it is given, a new string each time).
    reply.header('vary', addToVary(reply.getHeader('vary'), 'Accept-Encoding'));
    if (!encoding) return done(null, payload);

    if (!isStream(payload)) {
      const body = typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : undefined;
      if (body === undefined || Buffer.byteLength(body) < THRESHOLD_BYTES) return done(null, payload);
      // A body in memory is compressed in one call (see SYNC_LIMIT_BYTES), and keeps an exact Content-Length.
      const compressed = typeof body === 'string' ? compressBuffer(encoding, Buffer.from(body)) : compressedCopy(encoding, body);
      if (Buffer.isBuffer(compressed)) return sendCompressed(reply, encoding, compressed, done);
      compressed.then(
        (bytes) => sendCompressed(reply, encoding, bytes, done),
        (error: Error) => done(error),
      );
      return;
    }
    reply.header('content-encoding', encoding);
    reply.removeHeader('content-length');
    const stream = compressor(encoding);
    pipeline(payload, stream, (error) => {
      if (error) request.log.warn({ err: error }, 'compressed response ended early');
    });
    done(null, stream);
  });
}

// The load generator of bench/feeds.ts: N keep-alive connections, each asking for the next of a list of paths in turn
// as soon as its previous answer is in, with autocannon or (`lean`) a plain HTTP/1.1 client of its own, several times
// cheaper per request than autocannon, which spends more CPU on a kept page's answer than the daemon does. Run inside the benchmark's own process, or (`node bench/load-client.ts`, an order as JSON on stdin,
// the figures as JSON on stdout) as a process of its own, which the benchmark may pin to a CPU of its own and start at
// a lower priority: a real deployment's clients run on other machines, while here they share the daemon's cores.
// Besides autocannon's figures it reports the latency of each connection's first answer apart from the others (the
// first also waits for the daemon to accept the connection), and the CPU and event-loop delay of the process it ran
// in (a client stalled for a while reads every answer in flight late).
import autocannon from 'autocannon';
import { connect, type Socket } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { text } from 'node:stream/consumers';

export interface LoadOrder {
  url: string;
  connections: number;
  /** Seconds, or … */
  duration?: number;
  /** … this many requests in all. */
  amount?: number;
  headers: Record<string, string>;
  /** The paths asked for in turn, from `firstPath` on, starting over at the list's end. */
  paths: string[];
  firstPath: number;
  generator: LoadGenerator;
}

export type LoadGenerator = 'autocannon' | 'lean';

export interface LoadFigures {
  /** Requests answered. */
  requests: number;
  /** Requests sent (what the path list advanced by). */
  sent: number;
  perSecond: number;
  failed: number;
  p50: number;
  p99: number;
  max: number;
  /** Latencies (ms) of each connection's first answer, and of the others. */
  firsts: number[];
  later: number[];
  /** The load generator's process: its CPU (ms, all threads) and wall time while it ran, and its event-loop delay. */
  clientCpuMs: number;
  clientWallMs: number;
  clientLoopDelayP99Ms: number;
  clientLoopDelayMaxMs: number;
}

/** What a generator gives; `fire` adds its process's CPU and loop delay. */
type Answers = Omit<LoadFigures, 'clientCpuMs' | 'clientWallMs' | 'clientLoopDelayP99Ms' | 'clientLoopDelayMaxMs'>;

export async function fire(order: LoadOrder): Promise<LoadFigures> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const answers = order.generator === 'lean' ? await lean(order) : await withAutocannon(order);
  delay.disable();
  const used = process.cpuUsage(cpu);
  return {
    ...answers,
    clientCpuMs: (used.user + used.system) / 1000,
    clientWallMs: performance.now() - started,
    clientLoopDelayP99Ms: delay.percentile(99) / 1e6,
    clientLoopDelayMaxMs: delay.max / 1e6,
  };
}

async function withAutocannon(order: LoadOrder): Promise<Answers> {
  const firsts: number[] = [];
  const later: number[] = [];
  let sent = 0;
  // setupClient is in autocannon's documentation, not in its types.
  const options: Parameters<typeof autocannon>[0] & { setupClient: (client: NodeJS.EventEmitter) => void } = {
    url: order.url,
    connections: order.connections,
    ...(order.amount ? { amount: order.amount } : { duration: order.duration }),
    headers: order.headers,
    requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: order.paths[(order.firstPath + sent++) % order.paths.length] }) }],
    setupClient: (client) => {
      let first = true;
      client.on('response', (_status: number, _bytes: number, ms: number) => {
        (first ? firsts : later).push(ms);
        first = false;
      });
    },
  };
  const result = await autocannon(options);
  return { requests: result.requests.total, sent, perSecond: result.requests.average, failed: result.non2xx + result.errors + result.timeouts, p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max, firsts, later };
}

/** The q-quantile of ascending numbers (nearest rank). */
function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
}

const CRLF_CRLF = Buffer.from('\r\n\r\n');

/**
 * One answer read off a keep-alive connection: its status and headers, then a body of Content-Length bytes or in
 * chunks. Feeds `bytes` in as they come; `read` says how many it took and whether the answer is complete.
 */
class AnswerReader {
  status = 0;
  private head = Buffer.alloc(0);
  private inHead = true;
  private bodyLeft = 0;
  private chunked = false;
  /** In chunked mode: the text of the size line read so far, or the CRLF after a chunk still to skip. */
  private sizeLine = '';
  private skipCrlf = 0;
  private lastChunk = false;

  /** Takes what it needs of `bytes` from `at`; returns [bytes taken, complete]. */
  read(bytes: Buffer, at: number): [number, boolean] {
    let i = at;
    if (this.inHead) {
      const joined = this.head.length ? Buffer.concat([this.head, bytes.subarray(i)]) : bytes.subarray(i);
      const end = joined.indexOf(CRLF_CRLF);
      if (end < 0) {
        this.head = Buffer.from(joined);
        return [bytes.length - at, false];
      }
      const text = joined.toString('latin1', 0, end);
      i += end + 4 - this.head.length;
      this.head = Buffer.alloc(0);
      this.inHead = false;
      this.status = Number(text.slice(9, 12));
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(text);
      this.chunked = !length && /\r\ntransfer-encoding:[^\r]*chunked/i.test(text);
      this.bodyLeft = length ? Number(length[1]) : 0;
      if (!length && !this.chunked && this.status !== 204 && this.status !== 304) throw new Error(`an answer without Content-Length or chunks: ${text.split('\r\n')[0]}`);
    }
    while (i < bytes.length || (!this.chunked && this.bodyLeft === 0)) {
      if (this.bodyLeft > 0) {
        const take = Math.min(this.bodyLeft, bytes.length - i);
        this.bodyLeft -= take;
        i += take;
        continue;
      }
      if (!this.chunked) return this.done(i - at);
      if (this.skipCrlf > 0) {
        const take = Math.min(this.skipCrlf, bytes.length - i);
        this.skipCrlf -= take;
        i += take;
        if (this.skipCrlf === 0 && this.lastChunk) return this.done(i - at);
        continue;
      }
      const lineEnd = bytes.indexOf(10, i);
      if (lineEnd < 0) {
        this.sizeLine += bytes.toString('latin1', i);
        i = bytes.length;
        break;
      }
      this.sizeLine += bytes.toString('latin1', i, lineEnd + 1);
      i = lineEnd + 1;
      const size = Number.parseInt(this.sizeLine, 16);
      this.sizeLine = '';
      // The last chunk has no data; no trailers are sent here, so one CRLF ends the answer.
      this.lastChunk = size === 0;
      this.bodyLeft = size;
      this.skipCrlf = 2;
    }
    return [i - at, false];
  }

  private done(taken: number): [number, boolean] {
    this.inHead = true;
    this.chunked = false;
    this.lastChunk = false;
    return [taken, true];
  }
}

/**
 * The lean generator: a socket per connection, each sending its next request as soon as the answer to the previous one
 * is complete; latency from the write of a request to the last byte of its answer.
 */
function lean(order: LoadOrder): Promise<Answers> {
  const url = new URL(order.url);
  const base = url.pathname.replace(/\/$/, '');
  const headerLines = Object.entries({ host: url.host, ...order.headers })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const firsts: number[] = [];
  const later: number[] = [];
  let sent = 0;
  let failed = 0;
  let stopped = false;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    let open = order.connections;
    const finish = (): void => {
      if (--open > 0) return;
      const all = [...firsts, ...later].sort((a, b) => a - b);
      const wallS = (performance.now() - started) / 1000;
      const round = (ms: number): number => Math.round(ms * 10) / 10;
      resolve({ requests: all.length, sent, perSecond: all.length / wallS, failed, p50: round(quantile(all, 0.5)), p99: round(quantile(all, 0.99)), max: round(all.at(-1) ?? Number.NaN), firsts, later });
    };
    const sockets: Socket[] = [];
    const more = (): boolean => !stopped && (order.amount === undefined || sent < order.amount);
    const connection = (): void => {
      const socket: Socket = connect({ host: url.hostname, port: Number(url.port) });
      sockets.push(socket);
      socket.setNoDelay(true);
      const reader = new AnswerReader();
      let sentAt = 0;
      let first = true;
      let waiting = false;
      const ask = (): void => {
        if (!more()) {
          socket.end();
          return;
        }
        const path = order.paths[(order.firstPath + sent++) % order.paths.length] as string;
        waiting = true;
        sentAt = performance.now();
        socket.write(`GET ${base}${path} HTTP/1.1\r\n${headerLines}\r\n`);
      };
      socket.on('connect', ask);
      socket.on('data', (bytes: Buffer) => {
        let at = 0;
        while (at < bytes.length) {
          const [taken, complete] = reader.read(bytes, at);
          at += taken;
          if (!complete) continue;
          waiting = false;
          const ms = performance.now() - sentAt;
          (first ? firsts : later).push(ms);
          first = false;
          if (reader.status < 200 || reader.status >= 300) failed++;
          ask();
        }
      });
      socket.on('error', (error) => {
        if (!stopped) reject(error);
      });
      socket.on('close', () => {
        if (waiting && !stopped) failed++;
        finish();
      });
    };
    for (let c = 0; c < order.connections; c++) connection();
    if (order.duration !== undefined && order.amount === undefined) {
      setTimeout(() => {
        stopped = true;
        // Answers still on their way at the end are not counted, as autocannon does.
        for (const socket of sockets) socket.destroy();
      }, order.duration * 1000);
    }
  });
}

/** What a load generator in a process of its own writes once it has loaded, before it reads its order. */
export const LOAD_CLIENT_READY = 'ready';

if (import.meta.main) {
  process.stdout.write(`${LOAD_CLIENT_READY}\n`);
  const order = JSON.parse(await text(process.stdin)) as LoadOrder;
  process.stdout.write(JSON.stringify(await fire(order)));
}

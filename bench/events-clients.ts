// Child process of bench/events.ts: many live-update clients in one process, each a WebSocket speaking just enough
// STOMP (CONNECT, SUBSCRIBE to what the web UI subscribes to). Messages stay Buffers. With --measure, the arrival
// time of probe log lines (`probe:<n>`) and of each book-add (by book id) is kept; without, frames are only counted
// (the load). Commands on stdin: `report` (prints what arrived since the last report as one JSON line), `exit`.
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';

const { values } = parseArgs({ options: { url: { type: 'string' }, token: { type: 'string' }, count: { type: 'string', default: '500' }, measure: { type: 'boolean', default: false } } });
const measure = values.measure;
const url = values.url as string;
const token = values.token as string;
const count = Number(values.count);

const UI_DESTINATIONS = ['book-add', 'book-update', 'books-cover-update', 'books-remove', 'book-metadata-update', 'book-metadata-batch-update', 'book-metadata-batch-progress', 'log', 'bookdrop-file', 'task-progress', 'session-revoked']
  .map((q) => `/user/queue/${q}`)
  .concat('/topic/library-health');

const now = (): number => performance.timeOrigin + performance.now();
const PROBE = Buffer.from('probe:');
const BOOK_ADD = Buffer.from('destination:/user/queue/book-add\n');
const BODY_START = Buffer.from('\n\n{"id":');

let probes: [number, number][] = [];
let bookAdds: [number, number][] = [];
let frames = 0;
let closed = 0;
const sockets: WebSocket[] = [];

function digitsAt(buffer: Buffer, at: number): number {
  let n = 0;
  for (let i = at; i < buffer.length; i++) {
    const c = buffer[i] as number;
    if (c < 48 || c > 57) break;
    n = n * 10 + (c - 48);
  }
  return n;
}

function timeFrame(frame: Buffer, at: number): void {
  const probe = frame.indexOf(PROBE);
  if (probe !== -1) {
    probes.push([digitsAt(frame, probe + PROBE.length), at]);
    return;
  }
  if (frame.indexOf(BOOK_ADD) !== -1) {
    const body = frame.indexOf(BODY_START);
    if (body !== -1) bookAdds.push([digitsAt(frame, body + BODY_START.length), at]);
  }
}

function open(): Promise<void> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    ws.on('open', () => {
      ws.send(`CONNECT\naccept-version:1.2\nheart-beat:0,0\nAuthorization:Bearer ${token}\n\n\0`);
      UI_DESTINATIONS.forEach((d, i) => ws.send(`SUBSCRIBE\nid:sub-${i}\ndestination:${d}\n\n\0`));
    });
    let connected = false;
    ws.on('message', (data: Buffer) => {
      if (!connected) {
        if (data.subarray(0, 9).toString() === 'CONNECTED') {
          connected = true;
          resolve();
        } else reject(new Error(data.toString()));
        return;
      }
      // The server sends a burst's frames together in one message: each ends with NUL.
      const at = now();
      for (let start = 0; start < data.length; ) {
        // Newlines between frames are heart-beats.
        while (data[start] === 10) start++;
        if (start >= data.length) break;
        let end = data.indexOf(0, start);
        if (end === -1) end = data.length;
        frames++;
        if (measure) timeFrame(data.subarray(start, end), at);
        start = end + 1;
      }
    });
    ws.on('close', () => closed++);
    ws.on('error', reject);
    sockets.push(ws);
  });
}

for (let i = 0; i < count; i += 50) await Promise.all(Array.from({ length: Math.min(50, count - i) }, () => open()));
console.log(JSON.stringify({ ready: sockets.length }));

for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'report') {
    console.log(JSON.stringify({ probes, bookAdds, frames, closed }));
    probes = [];
    bookAdds = [];
    frames = 0;
  } else if (line === 'exit') {
    for (const ws of sockets) ws.terminate();
    process.exit(0);
  }
}

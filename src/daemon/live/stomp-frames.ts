// STOMP 1.2 frames: reading what a client sends (several frames, or part of one, per WebSocket message; heart-beat
// newlines between frames) and writing what the server sends. Header values are escaped as 1.2 asks (CONNECT and
// CONNECTED excepted).

export interface StompFrame {
  command: string;
  /** Header names as sent; the first occurrence of a repeated header wins. */
  headers: Map<string, string>;
  body: string;
}

export class StompProtocolError extends Error {
  override name = 'StompProtocolError';
}

const UNESCAPES: Record<string, string> = { '\\\\': '\\', '\\n': '\n', '\\r': '\r', '\\c': ':' };

function unescapeValue(value: string): string {
  return value.replace(/\\./g, (pair) => {
    const plain = UNESCAPES[pair];
    if (plain === undefined) throw new StompProtocolError(`undefined escape sequence ${pair} in a header`);
    return plain;
  });
}

export function escapeValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/:/g, '\\c');
}

function parseFrame(text: string): StompFrame {
  const split = text.search(/\r?\n\r?\n/);
  const head = split === -1 ? text : text.slice(0, split);
  const body = split === -1 ? '' : text.slice(split).replace(/^\r?\n\r?\n/, '');
  const [command = '', ...lines] = head.split(/\r?\n/);
  const raw = command === 'CONNECT' || command === 'STOMP';
  const headers = new Map<string, string>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new StompProtocolError(`malformed header line in ${command} frame`);
    const name = raw ? line.slice(0, colon) : unescapeValue(line.slice(0, colon));
    if (!headers.has(name)) headers.set(name, raw ? line.slice(colon + 1) : unescapeValue(line.slice(colon + 1)));
  }
  return { command, headers, body };
}

/**
 * Collects text until whole frames are there. A frame ends at a NUL byte (the server never reads client bodies, so
 * content-length is not needed to find the end); newlines between frames are heart-beats.
 */
export class FrameReader {
  private pending = '';
  private readonly maxFrameChars: number;

  constructor(maxFrameChars: number) {
    this.maxFrameChars = maxFrameChars;
  }

  push(chunk: string): StompFrame[] {
    this.pending += chunk;
    const frames: StompFrame[] = [];
    for (;;) {
      this.pending = this.pending.replace(/^(\r?\n)+/, '');
      const end = this.pending.indexOf('\0');
      if (end === -1) break;
      frames.push(parseFrame(this.pending.slice(0, end)));
      this.pending = this.pending.slice(end + 1);
    }
    if (this.pending.length > this.maxFrameChars) throw new StompProtocolError(`frame larger than ${this.maxFrameChars} bytes`);
    return frames;
  }
}

/** A server frame; values are escaped except in CONNECTED. */
export function writeFrame(command: string, headers: Record<string, string | number>, body = ''): string {
  const escape = command !== 'CONNECTED';
  let out = command + '\n';
  for (const [name, value] of Object.entries(headers)) out += `${name}:${escape ? escapeValue(String(value)) : String(value)}\n`;
  return `${out}\n${body}\0`;
}

/** A MESSAGE frame around an already serialized JSON body of `bytes` UTF-8 bytes. */
export function messageFrame(destination: string, subscription: string, messageId: number, body: string, bytes: number): string {
  return `MESSAGE\ndestination:${destination}\ncontent-type:application/json\nsubscription:${escapeValue(subscription)}\nmessage-id:${messageId}\ncontent-length:${bytes}\n\n${body}\0`;
}

/** `cx,cy` from a heart-beat header; a missing or malformed header means no heart-beats. */
export function parseHeartBeat(value: string | undefined): [number, number] {
  const match = /^\s*(\d+)\s*,\s*(\d+)\s*$/.exec(value ?? '');
  return match ? [Number(match[1]), Number(match[2])] : [0, 0];
}

/** The highest version both sides speak; undefined when none (a client without accept-version speaks 1.0). */
export function negotiateVersion(acceptVersion: string | undefined): string | undefined {
  const offered = (acceptVersion ?? '1.0').split(',').map((v) => v.trim());
  return ['1.2', '1.1', '1.0'].find((v) => offered.includes(v));
}

// The start of an FB2 document up to the end of its <description>, decoded from the declared encoding.
import { FormatError } from './errors.ts';
import { findBytes, type ByteSource } from './fb2-source.ts';
import { LIMITS } from './limits.ts';

export interface Fb2Head {
  /** A well-formed document: the original prolog, root and description, with the root element closed. */
  xml: string;
  /** Byte position just past the head; binaries are searched from here. */
  end: number;
}

/** How far into the file the root element must have started for it to count as FB2. */
const ROOT_SEARCH_BYTES = 64 * 1024;

const DESCRIPTION_END = Buffer.from('</description>');
const BODY_START = Buffer.from('<body');
const UTF16_LE_BOM = Buffer.from([0xff, 0xfe]);
const UTF16_BE_BOM = Buffer.from([0xfe, 0xff]);

function declaredEncoding(prolog: Buffer): string {
  const declaration = prolog.toString('latin1').match(/^\s*<\?xml[^>]*?encoding\s*=\s*["']([^"']+)["']/i);
  return declaration?.[1]?.trim() ?? 'utf-8';
}

function decode(bytes: Buffer, encoding: string): string {
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(encoding);
  } catch {
    decoder = new TextDecoder('utf-8');
  }
  return decoder.decode(bytes);
}

async function headEnd(source: ByteSource): Promise<number> {
  const limit = Math.min(source.size, LIMITS.maxXmlBytes);
  const descriptionEnd = await findBytes(source, DESCRIPTION_END, 0, limit);
  if (descriptionEnd !== -1) return descriptionEnd + DESCRIPTION_END.length;
  // A book with an empty or missing description: everything before the first body still parses.
  const bodyStart = await findBytes(source, BODY_START, 0, limit);
  if (bodyStart !== -1) return bodyStart;
  if (source.size > LIMITS.maxXmlBytes) {
    throw new FormatError('TOO_LARGE', `FB2 description does not end within the first ${LIMITS.maxXmlBytes} bytes`);
  }
  throw new FormatError('CORRUPT', 'FB2 document has no </description> and no <body> (truncated or not FB2)');
}

export async function readHead(source: ByteSource): Promise<Fb2Head> {
  const start = await source.read(0, Math.min(source.size, ROOT_SEARCH_BYTES));
  const bom = start.subarray(0, 2);
  if (bom.equals(UTF16_LE_BOM) || bom.equals(UTF16_BE_BOM)) {
    throw new FormatError('UNSUPPORTED', 'UTF-16 FB2 documents are not supported');
  }
  const root = start.toString('latin1').match(/<([A-Za-z_][\w.-]*:)?FictionBook\b/);
  if (!root) throw new FormatError('CORRUPT', 'not an FB2 document: no <FictionBook> root element');

  const end = await headEnd(source);
  const text = decode(await source.read(0, end), declaredEncoding(start));
  return { xml: `${text}</${root[1] ?? ''}FictionBook>`, end };
}

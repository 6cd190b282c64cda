// A PDF whose first page is one JPEG drawn over the whole page (a cover, a scan) gives that JPEG as its cover: no
// rendering, no decoding. Anything else on the page that would show (text, vector art, a second image, a mask,
// rotation, CMYK) means undefined, and the page is rendered as before.
import { PdfLexer, PdfName, PdfRef, filterNames, isDict, isOp, type PdfDict, type PdfObjects, type PdfValue } from './pdf-objects.ts';

/** The drawn image must cover at least this share of the page (scans are often a pixel or two short). */
const MIN_COVERAGE = 0.97;
const MAX_PAGE_TREE_DEPTH = 32;

type Matrix = [number, number, number, number, number, number];
const IDENTITY: Matrix = [1, 0, 0, 1, 0, 0];

function multiply(m: Matrix, n: Matrix): Matrix {
  return [m[0] * n[0] + m[1] * n[2], m[0] * n[1] + m[1] * n[3], m[2] * n[0] + m[3] * n[2], m[2] * n[1] + m[3] * n[3], m[4] * n[0] + m[5] * n[2] + n[4], m[4] * n[1] + m[5] * n[3] + n[5]];
}

/** Operators that only set state or draw nothing visible; anything else that paints ends the fast path. */
const HARMLESS = new Set(['q', 'Q', 'cm', 'gs', 'w', 'J', 'j', 'M', 'd', 'ri', 'i', 'CS', 'cs', 'SC', 'SCN', 'sc', 'scn', 'G', 'g', 'RG', 'rg', 'K', 'k', 'm', 'l', 'c', 'v', 'y', 'h', 're', 'W', 'W*', 'n', 'MP', 'DP', 'BMC', 'BDC', 'EMC', 'BX', 'EX']);
/** Text operators: allowed only while text is invisible (render mode 3, the OCR layer of a scan). */
const TEXT_STATE = new Set(['BT', 'ET', 'Tc', 'Tw', 'Tz', 'TL', 'Tf', 'Ts', 'Td', 'TD', 'Tm', 'T*', 'd0', 'd1']);
const TEXT_SHOW = new Set(['Tj', 'TJ', "'", '"']);

interface PageOne {
  page: PdfDict;
  resources: PdfDict | undefined;
  mediaBox: number[];
  rotate: number;
}

async function pageOne(objects: PdfObjects): Promise<PageOne | undefined> {
  const root = await objects.resolve(objects.trailer.Root);
  if (!isDict(root)) return undefined;
  let node = await objects.resolve(root.Pages);
  let resources: PdfValue | undefined;
  let mediaBox: PdfValue | undefined;
  let rotate: PdfValue | undefined;
  for (let depth = 0; depth < MAX_PAGE_TREE_DEPTH && isDict(node); depth++) {
    resources = node.Resources ?? resources;
    mediaBox = node.MediaBox ?? mediaBox;
    rotate = node.Rotate ?? rotate;
    const type = node.Type instanceof PdfName ? node.Type.name : undefined;
    if (type === 'Page' || (type === undefined && node.Kids === undefined)) {
      const box = await objects.resolve(mediaBox);
      const resolved = await objects.resolve(resources);
      const turn = await objects.resolve(rotate);
      if (!Array.isArray(box) || box.length !== 4 || !box.every((v) => typeof v === 'number')) return undefined;
      return { page: node, resources: isDict(resolved) ? resolved : undefined, mediaBox: box as number[], rotate: typeof turn === 'number' ? turn : 0 };
    }
    const kids = await objects.resolve(node.Kids);
    if (!Array.isArray(kids)) return undefined;
    let first: PdfValue | undefined;
    for (const kid of kids) {
      const child = await objects.resolve(kid);
      // An empty subtree holds no pages; skip to the next kid.
      if (isDict(child) && typeof child.Count === 'number' && child.Count === 0 && child.Kids !== undefined) continue;
      first = child;
      break;
    }
    node = first;
  }
  return undefined;
}

async function contentBytes(objects: PdfObjects, contents: PdfValue | undefined): Promise<Buffer | undefined> {
  const parts = Array.isArray(contents) ? contents : contents === undefined ? [] : [contents];
  const buffers: Buffer[] = [];
  for (const part of parts) {
    if (!(part instanceof PdfRef)) return undefined;
    buffers.push(await objects.decode(await objects.getStream(part.num)));
  }
  // Content streams split across parts are one stream with a separator between them.
  return Buffer.concat(buffers.flatMap((b) => [b, Buffer.from('\n')]));
}

interface Drawn {
  name: string;
  ctm: Matrix;
}

/** The one image drawn on the page and where, or undefined when the page draws anything else visible. */
function onlyImageDrawn(content: Buffer): Drawn | undefined {
  const lexer = new PdfLexer(content);
  const stack: { ctm: Matrix; textMode: number }[] = [];
  let state = { ctm: IDENTITY, textMode: 0 };
  let drawn: Drawn | undefined;
  const operands: PdfValue[] = [];
  for (let token = lexer.next(); token !== undefined; token = lexer.next()) {
    if (!isOp(token)) {
      operands.push(token);
      continue;
    }
    const op = token.op;
    if (op === 'BI') return undefined; // inline image
    if (op === 'q') stack.push({ ...state });
    else if (op === 'Q') state = stack.pop() ?? state;
    else if (op === 'cm') {
      if (operands.length !== 6 || !operands.every((v) => typeof v === 'number')) return undefined;
      state = { ...state, ctm: multiply(operands as Matrix, state.ctm) };
    } else if (op === 'Tr') state = { ...state, textMode: typeof operands[0] === 'number' ? operands[0] : 0 };
    else if (op === 'Do') {
      const name = operands[0];
      if (drawn || !(name instanceof PdfName)) return undefined;
      drawn = { name: name.name, ctm: state.ctm };
    } else if (TEXT_SHOW.has(op)) {
      if (state.textMode !== 3) return undefined;
    } else if (!HARMLESS.has(op) && !TEXT_STATE.has(op)) return undefined;
    operands.length = 0;
  }
  return drawn;
}

/** True when the unit square under `ctm` is upright (no rotation or flip) and covers the page box. */
function coversPage(ctm: Matrix, box: number[]): boolean {
  const [a, b, c, d, e, f] = ctm;
  if (Math.abs(b) > 1e-6 || Math.abs(c) > 1e-6 || a <= 0 || d <= 0) return false;
  const [x0, y0, x1, y1] = [Math.min(box[0]!, box[2]!), Math.min(box[1]!, box[3]!), Math.max(box[0]!, box[2]!), Math.max(box[1]!, box[3]!)];
  const width = Math.max(0, Math.min(x1, e + a) - Math.max(x0, e));
  const height = Math.max(0, Math.min(y1, f + d) - Math.max(y0, f));
  return (width * height) / ((x1 - x0) * (y1 - y0)) >= MIN_COVERAGE;
}

const PLAIN_SPACES = new Set(['DeviceRGB', 'DeviceGray', 'CalRGB', 'CalGray']);

async function isPlainJpeg(objects: PdfObjects, image: PdfDict): Promise<boolean> {
  if (!(image.Subtype instanceof PdfName) || image.Subtype.name !== 'Image') return false;
  const filters = filterNames(await objects.resolve(image.Filter));
  if (filters.length !== 1 || filters[0] !== 'DCTDecode') return false;
  if (image.SMask !== undefined || image.Mask !== undefined || image.Decode !== undefined || image.ImageMask === true) return false;
  const space = await objects.resolve(image.ColorSpace);
  if (space instanceof PdfName) return PLAIN_SPACES.has(space.name);
  // [/ICCBased stream] with one or three components; CMYK JPEGs (often stored inverted) are left to pdf.js.
  if (Array.isArray(space) && space[0] instanceof PdfName && space[0].name === 'ICCBased' && space[1] instanceof PdfRef) {
    const profile = await objects.getStream(space[1].num);
    const n = await objects.resolve(profile.dict.N);
    return n === 1 || n === 3;
  }
  return false;
}

/**
 * The JPEG that is all page one shows, as stored in the file, or undefined. Throws on a PDF this reader cannot
 * follow (the caller renders the page then).
 */
export async function pageOneJpeg(objects: PdfObjects): Promise<Buffer | undefined> {
  const one = await pageOne(objects);
  if (!one || one.rotate % 360 !== 0) return undefined;
  const content = await contentBytes(objects, one.page.Contents);
  if (!content) return undefined;
  const drawn = onlyImageDrawn(content);
  if (!drawn || !coversPage(drawn.ctm, one.mediaBox)) return undefined;
  const xobjects = await objects.resolve(one.resources?.XObject);
  const ref = isDict(xobjects) ? xobjects[drawn.name] : undefined;
  if (!(ref instanceof PdfRef)) return undefined;
  const stream = await objects.getStream(ref.num);
  if (!(await isPlainJpeg(objects, stream.dict))) return undefined;
  const jpeg = stream.raw;
  // A JPEG starts with SOI; anything else is not what the dictionary claims.
  return jpeg.length > 4 && jpeg[0] === 0xff && jpeg[1] === 0xd8 ? Buffer.from(jpeg) : undefined;
}

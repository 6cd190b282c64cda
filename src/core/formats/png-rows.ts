// PNG row filters (None, Sub, Up, Average, Paeth), as PDF streams with a PNG predictor (Predictor >= 10) store them:
// each row of `rowLength` bytes is preceded by its filter type. Shared by the PDF reader and the PDF write-back.

export class UnknownRowFilterError extends Error {}

/** The rows with their filters undone; `bytesPerPixel` is the distance of the "left" byte (at least 1). */
export function undoPngRowFilters(data: Buffer, rowLength: number, bytesPerPixel = 1): Buffer {
  const rows = Math.floor(data.length / (rowLength + 1));
  const out = Buffer.alloc(rows * rowLength);
  for (let r = 0; r < rows; r++) {
    const type = data[r * (rowLength + 1)] as number;
    const src = r * (rowLength + 1) + 1;
    const dst = r * rowLength;
    for (let i = 0; i < rowLength; i++) {
      const raw = data[src + i] as number;
      const left = i >= bytesPerPixel ? (out[dst + i - bytesPerPixel] as number) : 0;
      const up = r > 0 ? (out[dst - rowLength + i] as number) : 0;
      const upLeft = r > 0 && i >= bytesPerPixel ? (out[dst - rowLength + i - bytesPerPixel] as number) : 0;
      out[dst + i] = (raw + predicted(type, left, up, upLeft)) & 0xff;
    }
  }
  return out;
}

function predicted(type: number, left: number, up: number, upLeft: number): number {
  switch (type) {
    case 0:
      return 0;
    case 1:
      return left;
    case 2:
      return up;
    case 3:
      return (left + up) >> 1;
    case 4: {
      const p = left + up - upLeft;
      const pa = Math.abs(p - left);
      const pb = Math.abs(p - up);
      const pc = Math.abs(p - upLeft);
      return pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft;
    }
    default:
      throw new UnknownRowFilterError(`unknown PNG predictor row type ${type}`);
  }
}

// HTTP Range requests over a file of known size (RFC 9110 §14): one byte range is served; anything else is ignored or refused.

export type RangeDecision =
  | { kind: 'full' }
  | { kind: 'partial'; start: number; end: number }
  | { kind: 'unsatisfiable' };

/**
 * What to send for a `Range` header. A header that is not a `bytes=` range, or asks for several ranges, is ignored
 * (the whole file is sent, which the RFC allows); a syntactically valid single range that does not overlap the file is
 * unsatisfiable (416).
 */
export function decideRange(header: string | undefined, size: number): RangeDecision {
  if (!header) return { kind: 'full' };
  const match = /^\s*bytes\s*=\s*(.+)$/i.exec(header);
  if (!match) return { kind: 'full' };
  const specs = (match[1] as string).split(',').map((s) => s.trim());
  if (specs.length !== 1) return { kind: 'full' };
  const spec = /^(\d*)-(\d*)$/.exec(specs[0] as string);
  if (!spec) return { kind: 'unsatisfiable' };
  const [, first, last] = spec as unknown as [string, string, string];
  if (first === '' && last === '') return { kind: 'unsatisfiable' };
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (start >= size || (last !== '' && Number(last) < start)) return { kind: 'unsatisfiable' };
  return { kind: 'partial', start, end };
}

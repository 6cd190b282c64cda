// `--map OLD=NEW`: the folders another server saw (often inside a Docker container) and where they are here.
import { sep } from 'node:path';

export interface PathMapping {
  from: string;
  to: string;
}

const trimEnd = (p: string): string => (p.length > 1 ? p.replace(/[\\/]+$/, '') : p);

export function parsePathMapping(text: string): PathMapping {
  const at = text.indexOf('=');
  if (at <= 0 || at === text.length - 1) throw new Error(`--map takes OLD=NEW (e.g. /books=/srv/books), not "${text}"`);
  return { from: trimEnd(text.slice(0, at)), to: trimEnd(text.slice(at + 1)) };
}

/** The path with the longest matching OLD prefix (whole folder names only) replaced by its NEW; as it is otherwise. */
export function remapPath(path: string, mappings: readonly PathMapping[]): string {
  let best: PathMapping | undefined;
  for (const m of mappings) {
    const matches = path === m.from || path.startsWith(m.from.endsWith('/') || m.from.endsWith(sep) ? m.from : `${m.from}/`);
    if (matches && (!best || m.from.length > best.from.length)) best = m;
  }
  return best ? best.to + path.slice(best.from.length) : path;
}

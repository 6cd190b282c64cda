// The shared conformance material (official schemas, wire references, hash vectors) lives beside the repository.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

const REPO_ROOT = resolve(import.meta.dirname, '..', '..');

/** `../shared/conformance/<parts>` relative to the repository (as CI lays it out), or `BINDERY_CONFORMANCE_DIR`. */
export function conformancePath(...parts: string[]): string {
  const base = process.env.BINDERY_CONFORMANCE_DIR ?? join(REPO_ROOT, '..', 'shared', 'conformance');
  const path = join(base, ...parts);
  if (!existsSync(path)) throw new Error(`conformance material not found at ${path}: set BINDERY_CONFORMANCE_DIR`);
  return path;
}

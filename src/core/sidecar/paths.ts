// Where a book's sidecar files are: beside its primary file (or folder), named as Grimmory names them, so either
// program finds the other's files.
import { basename, dirname, join } from 'node:path';

/** The name up to its last dot (a leading dot does not count): `Dune.epub` → `Dune`, `x.fb2.zip` → `x.fb2`. */
function baseName(path: string): string {
  const name = basename(path);
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(0, dot) : name;
}

/** `<folder>/<base>.metadata.json` for the book at `bookPath`. */
export function sidecarPathFor(bookPath: string): string {
  return join(dirname(bookPath), `${baseName(bookPath)}.metadata.json`);
}

/** `<folder>/<base>.cover.jpg`, the cover image an export may write beside the sidecar. */
export function sidecarCoverPathFor(bookPath: string): string {
  return join(dirname(bookPath), `${baseName(bookPath)}.cover.jpg`);
}

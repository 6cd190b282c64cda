// A book file's absolute path is built without path.join's normalizing pass when there is nothing to normalize
// (src/core/books/book-json.ts); whatever the parts, it must be exactly what join gives.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { absoluteFilePath } from '../../src/core/books/book-json.ts';

const ROOTS = ['/srv/books', '/srv/books/', '/', '//srv', '/srv/./books', '/srv/../books', '/srv/..', '/srv/.hidden', 'relative', './relative'];
const SUB_PATHS = ['', 'Author/Series', 'Author/', '/Author', './Author', '../Author', 'Author/..', 'Author//Series', '.', '..', '.Author', 'Author.', 'a..b'];
const NAMES = ['Title.epub', '', '.hidden.epub', '..', '.', 'nested/Title.epub', '/Title.epub', 'Title/', 'Title..epub'];

describe('absoluteFilePath', () => {
  it('is what path.join gives for every shape of root, sub-path and name', () => {
    for (const root of ROOTS) {
      for (const sub of SUB_PATHS) {
        for (const name of NAMES) expect(absoluteFilePath(root, { file_sub_path: sub, file_name: name }), JSON.stringify([root, sub, name])).toBe(join(root, sub, name));
      }
    }
  });

  it('has no path without a root', () => {
    expect(absoluteFilePath(undefined, { file_sub_path: 'a', file_name: 'b.epub' })).toBeUndefined();
  });
});

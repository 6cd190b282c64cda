import { describe, expect, it } from 'vitest';
import { namesByBook, type NameRow } from '../../src/core/books/book-bundles.ts';

const KINDS = ['authors', 'tags'] as const;
const author = (book: number, name: string, position: number): NameRow => ({ book_id: book, kind: 0, name, ord_number: position, ord_text: null });
const tag = (book: number, name: string): NameRow => ({ book_id: book, kind: 1, name, ord_number: null, ord_text: name });

describe('namesByBook', () => {
  it('orders each list of a book: authors by position, tags by name, equal keys as they came', () => {
    const rows = [author(1, 'Second', 2), author(1, 'First', 1), author(1, 'Also first', 1), author(2, 'Only', 0), tag(1, 'zebra'), tag(1, 'apple'), tag(3, 'mid')];
    const names = namesByBook(rows, KINDS);
    expect(names.get(1)).toEqual({ authors: ['First', 'Also first', 'Second'], tags: ['apple', 'zebra'] });
    expect(names.get(2)).toEqual({ authors: ['Only'], tags: [] });
    expect(names.get(3)).toEqual({ authors: [], tags: ['mid'] });
    expect([...names.keys()]).toEqual([1, 2, 3]);
  });

  it('gives the same lists when a book\'s rows of one list do not come together (no order promised)', () => {
    const together = [author(1, 'B', 2), author(1, 'A', 1), author(2, 'C', 1), tag(1, 'y'), tag(1, 'x'), tag(2, 'w')];
    const scattered = [author(1, 'B', 2), author(2, 'C', 1), tag(1, 'y'), author(1, 'A', 1), tag(2, 'w'), tag(1, 'x')];
    const expected = { 1: { authors: ['A', 'B'], tags: ['x', 'y'] }, 2: { authors: ['C'], tags: ['w'] } };
    expect(Object.fromEntries(namesByBook(together, KINDS))).toEqual(expected);
    expect(Object.fromEntries(namesByBook(scattered, KINDS))).toEqual(expected);
  });
});

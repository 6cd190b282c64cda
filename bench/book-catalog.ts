// Fills a catalog with N synthetic books straight through better-sqlite3 (seconds for 100k), for list benchmarks.
import type Database from 'better-sqlite3';

export interface SyntheticCatalog {
  libraryId: number;
  bookIds: { first: number; last: number };
}

const WORDS = ['river', 'night', 'glass', 'empire', 'garden', 'shadow', 'winter', 'storm', 'silver', 'harbor', 'iron', 'letters', 'crown', 'machine', 'orchard', 'lantern'];

function phrase(i: number, words: number): string {
  const out: string[] = [];
  let x = i * 2654435761;
  for (let w = 0; w < words; w++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out.push(WORDS[x % WORDS.length] as string);
  }
  return out.join(' ');
}

export function fillCatalog(sqlite: Database.Database, books: number, root: string, userId?: number): SyntheticCatalog {
  const now = new Date().toISOString();
  const fill = sqlite.transaction(() => {
    const libraryId = Number(sqlite.prepare("INSERT INTO library (name, organization_mode) VALUES ('Synthetic', 'BOOK_PER_FILE')").run().lastInsertRowid);
    const pathId = Number(sqlite.prepare('INSERT INTO library_path (library_id, path) VALUES (?, ?)').run(libraryId, root).lastInsertRowid);
    const author = sqlite.prepare('INSERT INTO author (name) VALUES (?)');
    for (let a = 0; a < 20000; a++) author.run(`Author ${a} ${phrase(a, 1)}`);
    const category = sqlite.prepare('INSERT INTO category (name) VALUES (?)');
    for (let c = 0; c < 300; c++) category.run(`Category ${c}`);
    const tag = sqlite.prepare('INSERT INTO tag (name) VALUES (?)');
    for (let t = 0; t < 500; t++) tag.run(`tag-${t}`);
    const firstAuthor = Number((sqlite.prepare('SELECT min(id) FROM author').pluck().get() as number));
    const firstCategory = Number(sqlite.prepare('SELECT min(id) FROM category').pluck().get() as number);
    const firstTag = Number(sqlite.prepare('SELECT min(id) FROM tag').pluck().get() as number);

    const book = sqlite.prepare('INSERT INTO book (library_id, library_path_id, added_on, scanned_on, metadata_updated_at, book_cover_hash) VALUES (?, ?, ?, ?, ?, ?)');
    const meta = sqlite.prepare(
      `INSERT INTO book_metadata (book_id, title, subtitle, publisher, published_date, description, isbn_13, language, page_count, series_name, series_number, cover_updated_on, search_text)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const writes = sqlite.prepare('INSERT INTO book_metadata_author_mapping (book_id, author_id, sort_order) VALUES (?, ?, ?)');
    const inCategory = sqlite.prepare('INSERT INTO book_metadata_category_mapping (book_id, category_id) VALUES (?, ?)');
    const tagged = sqlite.prepare('INSERT INTO book_metadata_tag_mapping (book_id, tag_id) VALUES (?, ?)');
    const file = sqlite.prepare(
      `INSERT INTO book_file (book_id, library_path_id, file_sub_path, file_name, size_bytes, file_size_kb, mtime_ms, current_hash, initial_hash, added_on, is_book, book_type)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?)`,
    );
    let first = 0;
    let last = 0;
    for (let i = 0; i < books; i++) {
      const id = Number(book.run(libraryId, pathId, now, now, now, `BL-${String(i).padStart(13, '0')}`).lastInsertRowid);
      if (i === 0) first = id;
      last = id;
      const title = `${phrase(i, 3)} ${i}`;
      const series = i % 3 === 0 ? `Series ${i % 997}` : null;
      meta.run(id, title, i % 4 === 0 ? phrase(i + 7, 4) : null, `Publisher ${i % 150}`, `19${50 + (i % 50)}-01-01`, `${phrase(i, 40)}.`, `978${String(i).padStart(10, '0')}`, 'en', 100 + (i % 700), series, series ? (i % 12) + 1 : null, now, title.toLowerCase());
      writes.run(id, firstAuthor + (i % 20000), 0);
      if (i % 5 === 0) writes.run(id, firstAuthor + ((i + 10000) % 20000), 1);
      inCategory.run(id, firstCategory + (i % 300));
      inCategory.run(id, firstCategory + ((i + 150) % 300));
      tagged.run(id, firstTag + (i % 500));
      const sub = `${phrase(i % 5000, 1)}/${i}`;
      file.run(id, pathId, sub, `${title}.epub`, 400_000 + i, 390 + (i % 1000), Date.now(), 'a'.repeat(32), 'a'.repeat(32), now, 'EPUB');
      if (i % 10 === 0) file.run(id, pathId, sub, `${title}.pdf`, 900_000 + i, 880, Date.now(), 'b'.repeat(32), 'b'.repeat(32), now, 'PDF');
    }
    if (userId !== undefined) {
      const progress = sqlite.prepare('INSERT INTO user_book_progress (user_id, book_id, last_read_time, epub_progress_percent, epub_progress, read_status) VALUES (?, ?, ?, ?, ?, ?)');
      for (let i = 0; i < books; i += 10) progress.run(userId, first + i, now, (i % 100) + 0.37, 'epubcfi(/6/4!/4/2)', i % 20 === 0 ? 'READ' : 'READING');
      const shelf = Number(sqlite.prepare("INSERT INTO shelf (user_id, name) VALUES (?, 'Synthetic shelf')").run(userId).lastInsertRowid);
      const onShelf = sqlite.prepare('INSERT INTO book_shelf_mapping (book_id, shelf_id) VALUES (?, ?)');
      for (let i = 0; i < books; i += 20) onShelf.run(first + i, shelf);
    }
    return { libraryId, bookIds: { first, last } };
  });
  return fill();
}

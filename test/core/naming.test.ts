import { describe, expect, it } from 'vitest';
import { parsePattern, placeholdersOf, unknownParts } from '../../src/core/naming/pattern.ts';
import { fileExtension, fileStem, formatSeriesIndex, joinAuthors, renderPath, truncateFileName, type BookFacts } from '../../src/core/naming/render.ts';
import { isBlank, sanitize, truncateUtf8 } from '../../src/core/naming/text.ts';

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');
/** Grimmory's default `upload_file_pattern` (behaviors.md §4). */
const DEFAULT_UPLOAD_PATTERN = '{authors}/<{series}/><{seriesIndex}. >/{title}/{title}< - {authors}>< ({year})>';

function render(pattern: string | null, facts: Partial<BookFacts>, fileName = 'original.pdf'): string {
  return renderPath(pattern, { fileName, ...facts });
}

describe('parser', () => {
  it('splits text, placeholders with modifiers and optional blocks with fallbacks', () => {
    const parsed = parsePattern('{authors:sort}/<{series}|Standalone>/{title}');
    expect(parsed.nodes).toEqual([
      { type: 'placeholder', name: 'authors', modifier: 'sort', raw: '{authors:sort}' },
      { type: 'text', text: '/' },
      { type: 'optional', primary: [{ type: 'placeholder', name: 'series', modifier: null, raw: '{series}' }], fallback: [{ type: 'text', text: 'Standalone' }], raw: '<{series}|Standalone>' },
      { type: 'text', text: '/' },
      { type: 'placeholder', name: 'title', modifier: null, raw: '{title}' },
    ]);
  });

  it('treats malformed syntax as text and does not nest blocks', () => {
    expect(parsePattern('{}{title:}<abc').nodes).toEqual([{ type: 'text', text: '{}{title:}<abc' }]);
    // the inner <...> is the block; the outer '<' and '>' are text
    const nested = parsePattern('<a<{title}>b>');
    expect(nested.nodes.map((n) => n.type)).toEqual(['text', 'optional', 'text']);
    expect(nested.nodes[0]).toEqual({ type: 'text', text: '<a' });
    // only the first bar separates the fallback
    const bars = parsePattern('<{series}|a|b>').nodes[0];
    expect(bars).toMatchObject({ type: 'optional', fallback: [{ type: 'text', text: 'a|b' }] });
    // an empty fallback is a fallback
    expect(parsePattern('<{series}|>').nodes[0]).toMatchObject({ fallback: [] });
    // a modifier may contain colons
    expect(parsePattern('{a:b:c}').nodes[0]).toMatchObject({ name: 'a', modifier: 'b:c' });
  });

  it('lists placeholders and reports unknown names and modifiers', () => {
    expect(placeholdersOf(parsePattern(DEFAULT_UPLOAD_PATTERN)).map((p) => p.name)).toEqual(['authors', 'series', 'seriesIndex', 'title', 'title', 'authors', 'year']);
    expect(unknownParts('{title}/{foo}<{bar:upper}>{authors:reverse}')).toEqual({ placeholders: ['{foo}', '{bar:upper}'], modifiers: ['reverse'] });
  });
});

describe('text rules', () => {
  it('sanitizes illegal and control characters and collapses spaces', () => {
    expect(sanitize('Book: Title? *With* Special/Chars')).toBe('Book Title With SpecialChars');
    expect(sanitize('  a \\ b | c < d > e " f  ')).toBe('a b c d e f');
    expect(sanitize('tab\there\nnew\u0007line\u007f')).toBe('tabherenewline');
    expect(sanitize('keep\u00a0nbsp')).toBe('keep\u00a0nbsp');
    expect(sanitize(null)).toBe('');
  });

  it('follows Java blank rules', () => {
    expect(isBlank('   ')).toBe(true);
    expect(isBlank('\t\n')).toBe(true);
    expect(isBlank('\u00a0')).toBe(false);
    expect(isBlank(undefined)).toBe(true);
  });

  it('cuts UTF-8 on character boundaries', () => {
    expect(truncateUtf8('中国文化', 7)).toBe('中国');
    expect(truncateUtf8('a😀b', 4)).toBe('a');
    expect(truncateUtf8('a😀b', 5)).toBe('a😀');
    expect(truncateUtf8('short', 200)).toBe('short');
  });

  it('pads series numbers and keeps fractions', () => {
    expect(formatSeriesIndex(1)).toBe('01');
    expect(formatSeriesIndex(12)).toBe('12');
    expect(formatSeriesIndex(123)).toBe('123');
    expect(formatSeriesIndex(1.5)).toBe('01.5');
    expect(formatSeriesIndex(8.1)).toBe('08.1');
    expect(formatSeriesIndex(2.25)).toBe('02.25');
    expect(formatSeriesIndex(0)).toBe('00');
    expect(formatSeriesIndex(null)).toBe('');
  });

  it('joins authors and cuts long lists at an author boundary with et al.', () => {
    expect(joinAuthors(['A', 'B'])).toBe('A, B');
    const many = Array.from({ length: 30 }, (_, i) => `Author Number ${i}`);
    const joined = joinAuthors(many);
    expect(joined.endsWith(' et al.')).toBe(true);
    const kept = joined.slice(0, -' et al.'.length);
    expect(bytes(kept)).toBeLessThanOrEqual(180);
    expect(many.join(', ').startsWith(kept)).toBe(true);
    expect(kept.split(', ').every((a) => many.includes(a))).toBe(true);
    const single = joinAuthors(['A'.repeat(300)]);
    expect(single).toBe(`${'A'.repeat(173)} et al.`);
  });

  it('splits extensions, keeping .fb2.zip whole, never for folders', () => {
    expect(fileExtension('Dune.epub')).toBe('epub');
    expect(fileExtension('My.Awesome.Book.epub')).toBe('epub');
    expect(fileExtension('Book.FB2.ZIP')).toBe('FB2.ZIP');
    expect(fileExtension('noext')).toBe('');
    expect(fileExtension('trailing.')).toBe('');
    expect(fileExtension('Some.Audiobook', true)).toBe('');
    expect(fileStem('Book.fb2.zip')).toBe('Book');
    expect(fileStem('.hidden')).toBe('.hidden');
    expect(fileStem('Some.Audiobook', true)).toBe('Some.Audiobook');
  });
});

describe('renderPath', () => {
  it('returns the current file name for a blank pattern', () => {
    expect(render(null, { title: 'Test Book' }, 'test.pdf')).toBe('test.pdf');
    expect(render('', { title: 'Test Book' }, 'test.pdf')).toBe('test.pdf');
    expect(render('   ', { title: 'Test Book' }, 'test.pdf')).toBe('test.pdf');
  });

  it('appends the original extension unless the pattern names it', () => {
    expect(render('{title}', { title: 'Test Book' })).toBe('Test Book.pdf');
    expect(render('{title}.{extension}', { title: 'Test Book' })).toBe('Test Book.pdf');
    expect(render('{title}.1', { title: 'Book Version 2' }, 'original.epub')).toBe('Book Version 2.1.epub');
    expect(render('books/{currentFilename}', { title: 'Book Title' }, 'My.File.With.Dots.epub')).toBe('books/My.File.With.Dots.epub');
    expect(render('{title}', { title: 'Book Title' }, 'fileWithoutExtension')).toBe('Book Title');
    expect(render('{currentFilename}', { title: 'Test' }, 'fileWithoutExtension')).toBe('fileWithoutExtension');
    expect(render('{title}', { title: 'My.Awesome.Book' }, 'My.Awesome.Book.epub')).toBe('My.Awesome.Book.epub');
    expect(render('{title}', { title: 'Chapter.8.1' }, 'Chapter.8.1.cbz')).toBe('Chapter.8.1.cbz');
    // a modified {extension} does not count as naming it
    expect(render('{title}.{extension:upper}', { title: 'T' }, 'a.epub')).toBe('T.EPUB.epub');
    // compound fb2.zip stays whole
    expect(render('{title}', { title: 'Fiction' }, 'x.fb2.zip')).toBe('Fiction.fb2.zip');
  });

  it('falls back to the file name when the title is missing or the result is blank or only an extension', () => {
    expect(render('{title}', { title: null })).toBe('original.pdf');
    expect(render('{title}', {})).toBe('original.pdf');
    expect(render('{title}.{extension}', { title: '   ' })).toBe('original.pdf');
    expect(render('{title}', { title: '' }, 'fallback.epub')).toBe('fallback.epub');
    expect(render('{subtitle}', { title: 'T' }, 'fallback.epub')).toBe('fallback.epub');
    expect(render('{subtitle}.{extension}', { title: 'T' }, 'fallback.epub')).toBe('fallback.epub');
    expect(render('{currentFilename}', { title: 'Book Title' })).toBe('original.pdf');
    expect(render('{title}', { title: 'Test' }, '')).toBe('Test');
    expect(render('{title}', { title: '' }, '')).toBe('Untitled');
  });

  it('substitutes every placeholder', () => {
    const facts: Partial<BookFacts> = {
      title: 'The Great Book', subtitle: 'A Tale', authors: ['Jane Doe', 'John Roe'], publishedDate: '2023-05-15', seriesName: 'Saga', seriesNumber: 3,
      language: 'en', publisher: 'Acme', isbn13: '9781234567890', isbn10: '1234567890',
    };
    expect(render('{authors}|{title}|{subtitle}|{year}|{series}|{seriesIndex}|{language}|{publisher}|{isbn}|{currentFilename}|{extension}', facts, 'orig.epub'))
      .toBe('Jane Doe, John Roe|The Great Book|A Tale|2023|Saga|03|en|Acme|9781234567890|orig.epub|epub');
    expect(render('{authors} - {title}< [{series} #{seriesIndex}]>< ({year})>', facts)).toBe('Jane Doe, John Roe - The Great Book [Saga #03] (2023).pdf');
    expect(render('{title} - {isbn}', { title: 'Book Title', isbn10: '1234567890' })).toBe('Book Title - 1234567890.pdf');
    expect(render('{series} #{seriesIndex} - {title}', { title: 'Book Title', seriesName: 'Series Name', seriesNumber: 2 })).toBe('Series Name #02 - Book Title.pdf');
    expect(render('{series} #{seriesIndex} - {title}', { title: 'Book Title', seriesName: 'Series Name', seriesNumber: 2.5 })).toBe('Series Name #02.5 - Book Title.pdf');
    expect(render('{series} - Chapter {seriesIndex}', { seriesName: 'One Punch Man', seriesNumber: 8.1 }, 'One Punch Man - Chapter 8.1.cbz')).toBe('One Punch Man - Chapter 08.1.cbz');
    expect(render('{year}', { title: 'T', publishedDate: '1965' })).toBe('1965.pdf');
  });

  it('keeps unknown placeholders literally outside blocks and drops blocks that use them', () => {
    expect(render('{title} - {unknown}', { title: 'Test' }, 'test.epub')).toBe('Test - {unknown}.epub');
    expect(render('{title}<-{unknown}>', { title: 'Test' }, 'test.epub')).toBe('Test.epub');
    expect(render('{title}<{unknown}|-{other}x>', { title: 'Test' }, 'test.epub')).toBe('Test-x.epub');
  });

  it('emits optional blocks only when every placeholder has a value, else the fallback', () => {
    expect(render('{title}< - {authors}>', { title: 'Book Title', authors: ['Author Name'] })).toBe('Book Title - Author Name.pdf');
    expect(render('{title}< - {authors}>', { title: 'Book Title' })).toBe('Book Title.pdf');
    expect(render('{title}< - {authors}>', { title: 'Book Title', authors: [] })).toBe('Book Title.pdf');
    expect(render('{title}< [{series}]>< ({year})>', { title: 'Book Title' })).toBe('Book Title.pdf');
    expect(render('<{series}|Standalone>/{title}', { title: 'Book Title', seriesName: 'My Series' })).toBe('My Series/Book Title.pdf');
    expect(render('<{series}|Standalone>/{title}', { title: 'Book Title' })).toBe('Standalone/Book Title.pdf');
    expect(render('<{series}/{seriesIndex} - {title}|{title}>', { title: 'Book Title', seriesName: 'S' })).toBe('Book Title.pdf');
    expect(render('<{series}/>{title}', { title: 'Book Title' })).toBe('Book Title.pdf');
    expect(render('<{series}|Standalone>/<{year} - >{title}', { title: 'Book Title' })).toBe('Standalone/Book Title.pdf');
    expect(render('<{series}|Standalone>/<{year}|Unknown Year> - {title}', { title: 'Book Title', authors: ['Author'] })).toBe('Standalone/Unknown Year - Book Title.pdf');
    expect(render('<{series}|>{title}', { title: 'Book Title' })).toBe('Book Title.pdf');
    expect(render('<{series} by {authors:sort}|{title}>', { title: 'Book Title', authors: ['Patrick Rothfuss'], seriesName: 'My Series' })).toBe('My Series by Rothfuss, Patrick.pdf');
    expect(render('<{authors:sort}/>{title}', { title: 'Book Title' })).toBe('Book Title.pdf');
    expect(render('<static>{title}', { title: 'T' })).toBe('staticT.pdf');
  });

  it('applies modifiers', () => {
    const rothfuss: Partial<BookFacts> = { title: 'Book Title', authors: ['Patrick Rothfuss', 'Someone Else'] };
    expect(render('{authors:first}/{title}', rothfuss)).toBe('Patrick Rothfuss/Book Title.pdf');
    expect(render('{authors:sort}/{title}', rothfuss)).toBe('Rothfuss, Patrick/Book Title.pdf');
    expect(render('{authors:sort}/{title}', { title: 'Book Title', authors: ['Plato'] })).toBe('Plato/Book Title.pdf');
    expect(render('{authors:sort}/{title}', { title: 'Book Title', authors: ['Mary Jane Watson'] })).toBe('Watson, Mary Jane/Book Title.pdf');
    expect(render('{authors:initial}/{authors:sort}/{title}', rothfuss)).toBe('R/Rothfuss, Patrick/Book Title.pdf');
    expect(render('{authors:initial}/{title}', { title: 'Book Title', authors: ['Plato'] })).toBe('P/Book Title.pdf');
    expect(render('{title:initial}/{title}', { title: 'The Name of the Wind' })).toBe('T/The Name of the Wind.pdf');
    expect(render('{title:initial}/{title}', { title: 'lowercase title' })).toBe('L/lowercase title.pdf');
    expect(render('{title:upper}', { title: 'Book Title' })).toBe('BOOK TITLE.pdf');
    expect(render('{title:lower}', { title: 'Book Title' })).toBe('book title.pdf');
    expect(render('{title:reverse}', { title: 'Book Title' })).toBe('Book Title.pdf');
    expect(render('{title:first}', { title: 'Intro, Outro, Epilogue' })).toBe('Intro.pdf');
    expect(render('{title:sort}', { title: 'The Wind' })).toBe('Wind, The.pdf');
    expect(render('{title:initial}/{authors:first}/{title:lower}', { title: 'Book Title', authors: ['Patrick Rothfuss'] })).toBe('B/Patrick Rothfuss/book title.pdf');
    expect(render('<{series}|{authors:sort}>/{title}', { title: 'Book Title', authors: ['Patrick Rothfuss'] })).toBe('Rothfuss, Patrick/Book Title.pdf');
    expect(render('{subtitle:upper}{title}', { title: 'T' })).toBe('T.pdf');
  });

  it('renders the default upload pattern', () => {
    expect(render(DEFAULT_UPLOAD_PATTERN, { title: 'Dune', authors: ['Frank Herbert'], seriesName: 'Dune Chronicles', seriesNumber: 1, publishedDate: '1965-08-01' }, 'dune.epub'))
      .toBe('Frank Herbert/Dune Chronicles/01. /Dune/Dune - Frank Herbert (1965).epub');
    expect(render(DEFAULT_UPLOAD_PATTERN, { title: 'Emma', authors: ['Jane Austen'] }, 'emma.epub')).toBe('Jane Austen/Emma/Emma - Jane Austen.epub');
    expect(render(DEFAULT_UPLOAD_PATTERN, { title: 'Anonymous Work' }, 'a.pdf')).toBe('Anonymous Work/Anonymous Work.pdf');
    expect(render('{authors}/<{series}/><{seriesIndex}. >{title}< ({year})>', { title: 'Book Title', authors: ['Author'], seriesName: 'Series', seriesNumber: 1, publishedDate: '2023-01-01' }, 'original.epub'))
      .toBe('Author/Series/01. Book Title (2023).epub');
  });

  it('sanitizes values but not the literal pattern, and strips trailing dots from folders', () => {
    expect(render('{title}', { title: 'Book: Title? *With* Special/Chars' })).toBe('Book Title With SpecialChars.pdf');
    expect(render('{authors}/{title}', { title: 'Book Title', authors: ['Author Name Jr.'] })).toBe('Author Name Jr/Book Title.pdf');
    expect(render('{authors}/{series}/{title}', { title: 'Book Title.', seriesName: 'Series.', authors: ['Author.'] })).toBe('Author/Series/Book Title..pdf');
    expect(render('{authors}/{title}', { title: 'Book Title...', authors: ['Author Name...'] }, 'test.pdf')).toBe('Author Name/Book Title....pdf');
    expect(render('{authors}/{title}', { title: 'Book Title', authors: [] })).toBe('Book Title.pdf');
    expect(render('/{title}', { title: 'Book Title' })).toBe('Book Title.pdf');
    expect(render('{title}/', { title: 'Book Title' })).toBe('Book Title/.pdf');
  });

  it('cuts values and path components to their byte limits', () => {
    const longTitle = 'T'.repeat(300);
    expect(render('{title}', { title: longTitle })).toBe(`${'T'.repeat(200)}.pdf`);
    const cjk = '中'.repeat(100); // 300 bytes
    const out = render('{title}', { title: cjk }, 'x.epub');
    expect(out).toBe(`${'中'.repeat(66)}.epub`);
    // a literal component over 245 bytes is cut, keeping the extension
    const literal = 'L'.repeat(300);
    expect(render(`${literal}/{title}`, { title: 'T' })).toBe(`${'L'.repeat(245)}/T.pdf`);
    const longName = render(`{title}${'x'.repeat(100)}`, { title: longTitle });
    expect(bytes(longName)).toBe(245);
    expect(longName.endsWith('.pdf')).toBe(true);
    // an unusually long extension is not kept apart
    const ext = '.a'.repeat(30);
    const withExt = render('{title}', { title: 'Test' }, `test${ext}`);
    expect(withExt).toBe('Test.a');
    expect(truncateFileName(`${'n'.repeat(250)}${'.b'.repeat(30)}`)).toHaveLength(245);
    // many authors
    const authors = Array.from({ length: 40 }, (_, i) => `Writer ${i}`);
    const a = render('{authors}', { authors, title: 'T' }, 'test.epub').replace(/\.epub$/, '');
    expect(a.endsWith(' et al.')).toBe(true);
    expect(bytes(a)).toBeLessThanOrEqual(180 + 7);
  });

  it('names folder audiobooks without extensions and keeps their dots', () => {
    const facts: BookFacts = { title: 'Project Hail Mary', authors: ['Andy Weir'], fileName: 'phm.audiobook', folderBased: true };
    expect(renderPath('{authors}/{title}', facts)).toBe('Andy Weir/Project Hail Mary');
    expect(renderPath('{authors}/{title}', { ...facts, title: null })).toBe('Andy Weir/phm.audiobook');
    expect(renderPath('{authors}/{title}', { ...facts, authors: ['A. B. Jr.'], title: 'Vol. 2.' })).toBe('A. B. Jr./Vol. 2.');
    expect(renderPath('{title}.{extension}', { ...facts, title: 'X' })).toBe('X.');
    expect(renderPath(DEFAULT_UPLOAD_PATTERN, facts)).toBe('Andy Weir/Project Hail Mary/Project Hail Mary - Andy Weir');
  });

  it('never leaves ".." path components from values', () => {
    expect(render('{title}', { title: '..' }, 'x.epub')).toBe('x.epub');
    expect(render('{title}/{authors}', { title: '..', authors: ['..'] }, 'x.epub')).toBe('...epub');
    expect(render('{authors}/{title}', { title: 'A', authors: ['..'] }, 'x.epub')).toBe('A.epub');
  });
});

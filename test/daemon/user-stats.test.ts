// Reading and listening statistics over the API, on a real catalog, in a zone with daylight saving time (statistics
// follow the server's local calendar): each route's numbers against hand-computed ones, only the caller's own sessions,
// only books the caller may still see, and parameters out of range refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dayNumber, isoWeekOfDay, localDayOf, localMidnight } from '../../src/core/stats/calendar.ts';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';

// Berlin: UTC+1 in winter, UTC+2 from 2025-03-30T01:00Z to 2025-10-26T01:00Z. The daemon runs in this process.
const ZONE = 'Europe/Berlin';
const previousZone = process.env.TZ;
process.env.TZ = ZONE;

let d: TestDaemon;
type User = { id: number; token: string };
let admin: User;
let reader: User;
let other: User;
let streaker: User;
let listener: User;
let nostats: User;
const book: Record<'dune' | 'emma' | 'audioOne' | 'audioTwo' | 'hidden' | 'unread', number> = { dune: 0, emma: 0, audioOne: 0, audioTwo: 0, hidden: 0, unread: 0 };

const STATS = { canAccessUserStats: true };
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

interface SessionSeed {
  user: User;
  book: number;
  type: string;
  start: string | number;
  seconds: number;
  from?: number | null;
  to?: number | null;
}

async function session(s: SessionSeed): Promise<void> {
  const start = typeof s.start === 'number' ? s.start : Date.parse(s.start);
  const end = new Date(start + s.seconds * 1000).toISOString();
  const delta = s.from != null && s.to != null ? s.to - s.from : null;
  await d.store.db
    .insertInto('reading_sessions')
    .values({
      user_id: s.user.id,
      book_id: s.book,
      book_type: s.type,
      start_time: new Date(start).toISOString(),
      end_time: end,
      duration_seconds: s.seconds,
      start_progress: s.from ?? null,
      end_progress: s.to ?? null,
      progress_delta: delta,
      start_location: null,
      end_location: null,
      created_at: end,
    })
    .execute();
}

async function categorize(bookId: number, names: string[]): Promise<void> {
  for (const name of names) {
    const existing = await d.store.db.selectFrom('category').select('id').where('name', '=', name).executeTakeFirst();
    const id = existing?.id ?? (await d.store.db.insertInto('category').values({ name }).returning('id').executeTakeFirstOrThrow()).id;
    await d.store.db.insertInto('book_metadata_category_mapping').values({ book_id: bookId, category_id: id }).execute();
  }
}

async function progress(user: User, bookId: number, values: Record<string, string | number | null>): Promise<void> {
  await d.store.db.insertInto('user_book_progress').values({ user_id: user.id, book_id: bookId, ...values }).execute();
}

beforeAll(async () => {
  d = await startTestDaemon();
  const shelf = await seedLibrary(d.store.db, d.dir, 'Shelf');
  const vault = await seedLibrary(d.store.db, d.dir, 'Vault');
  book.dune = (await seedBook(d.store.db, shelf, { title: 'Dune' })).bookId;
  book.emma = (await seedBook(d.store.db, shelf, { title: 'Emma', types: ['PDF'] })).bookId;
  const audioOne = await seedBook(d.store.db, shelf, { title: 'Audio One', types: ['AUDIOBOOK'], authors: ['Narrator X', 'Author A'] });
  const audioTwo = await seedBook(d.store.db, shelf, { title: 'Audio Two', types: ['AUDIOBOOK'], authors: ['Narrator X'] });
  book.audioOne = audioOne.bookId;
  book.audioTwo = audioTwo.bookId;
  book.unread = (await seedBook(d.store.db, shelf, { title: 'Unread' })).bookId;
  book.hidden = (await seedBook(d.store.db, vault, { title: 'Hidden' })).bookId;
  await d.store.db.updateTable('book_metadata').set({ page_count: 412 }).where('book_id', '=', book.dune).execute();
  await d.store.db.updateTable('book_file').set({ duration_seconds: 36_000 }).where('id', '=', audioOne.fileIds[0] as number).execute();
  await d.store.db.updateTable('book_file').set({ duration_seconds: 7_200 }).where('id', '=', audioTwo.fileIds[0] as number).execute();
  await categorize(book.dune, ['Science Fiction', 'Classics']);
  await categorize(book.emma, ['Classics', 'Romance']);
  await categorize(book.audioOne, ['Science Fiction']);
  await categorize(book.hidden, ['Classics']);

  admin = await d.createUser('admin', { admin: true }, [shelf, vault]);
  reader = await d.createUser('reader', STATS, [shelf]);
  other = await d.createUser('other', STATS, [shelf]);
  streaker = await d.createUser('streaker', STATS, [shelf]);
  listener = await d.createUser('listener', STATS, [shelf]);
  nostats = await d.createUser('nostats', {}, [shelf]);
  await d.store.db.insertInto('user_content_restriction').values({ user_id: other.id, restriction_type: 'CATEGORY', mode: 'EXCLUDE', value: 'Romance' }).execute();

  // The reader's sessions; local (Berlin) times in the comments.
  const r = (b: number, type: string, start: string, seconds: number, from: number | null = null, to: number | null = null) => session({ user: reader, book: b, type, start, seconds, from, to });
  await r(book.dune, 'EPUB', '2024-12-31T23:30:00Z', 600, 0, 5); //    s1 2025-01-01 00:30 Wed
  await r(book.dune, 'EPUB', '2025-03-29T22:30:00Z', 1200, 5, 15); //   s2 2025-03-29 23:30 Sat (+1)
  await r(book.dune, 'EPUB', '2025-03-30T22:30:00Z', 1800, 15, 30); //  s3 2025-03-31 00:30 Mon (+2)
  await r(book.dune, 'EPUB', '2025-06-10T18:00:00Z', 3600, 30, 60); //  s4 2025-06-10 20:00 Tue
  await r(book.dune, 'EPUB', '2025-06-11T18:15:00Z', 2400, 60, 90); //  s5 2025-06-11 20:15 Wed
  await r(book.dune, 'EPUB', '2025-06-12T06:00:00Z', 900, 90, 100); //  s6 2025-06-12 08:00 Thu
  await r(book.emma, 'PDF', '2025-06-10T07:00:00Z', 1500, 0, 20); //    e1 2025-06-10 09:00 Tue
  await r(book.emma, 'PDF', '2024-07-01T10:00:00Z', 300); //            e2 2024-07-01 12:00 Mon
  await r(book.audioOne, 'AUDIOBOOK', '2025-06-10T19:00:00Z', 3000, 0, 40); //  a1 2025-06-10 21:00 Tue
  await r(book.audioOne, 'AUDIOBOOK', '2025-06-14T08:00:00Z', 1200, 40, 60); // a2 2025-06-14 10:00 Sat
  await r(book.audioTwo, 'AUDIOBOOK', '2025-05-20T05:00:00Z', 600, 98.5, 99); // a3 2025-05-20 07:00 Tue
  await r(book.hidden, 'EPUB', '2025-06-10T12:00:00Z', 999, 0, 50); // the reader no longer sees this book
  await r(book.hidden, 'EPUB', '2025-06-11T12:00:00Z', 100, 50, 60);

  await progress(reader, book.dune, { read_status: 'READ', date_finished: '2024-12-31T23:30:00.000Z', personal_rating: 9, epub_progress_percent: 100 });
  await progress(reader, book.emma, { read_status: 'READING', read_status_modified_time: '2025-05-31T22:30:00.000Z', personal_rating: 7, epub_progress_percent: 30, pdf_progress_percent: 10 });
  await progress(reader, book.audioOne, { read_status: 'READ', date_finished: '2025-06-14T09:00:00.000Z' });
  await progress(reader, book.audioTwo, { read_status: 'ABANDONED', last_read_time: '2025-06-20T10:00:00.000Z', personal_rating: 9, koreader_progress_percent: 0.8 });
  await progress(reader, book.unread, { read_status: 'UNREAD', read_status_modified_time: '2025-06-01T10:00:00.000Z', date_finished: '2016-12-31T23:30:00.000Z', kobo_progress_percent: 12 });
  await progress(reader, book.hidden, { read_status: 'READ', date_finished: '2025-06-05T10:00:00.000Z', personal_rating: 3, epub_progress_percent: 50 });

  // Someone else's reading, on the same books; Emma is hidden from them by a content restriction.
  await session({ user: other, book: book.dune, type: 'EPUB', start: '2025-06-10T12:00:00Z', seconds: 500 });
  await session({ user: other, book: book.emma, type: 'PDF', start: '2025-06-10T13:00:00Z', seconds: 500 });
  await session({ user: admin, book: book.hidden, type: 'EPUB', start: '2025-06-10T12:00:00Z', seconds: 500 });
  await progress(other, book.dune, { read_status: 'READ', date_finished: '2025-06-12T10:00:00.000Z', personal_rating: 1 });
});

afterAll(async () => {
  await d?.close();
  if (previousZone === undefined) delete process.env.TZ;
  else process.env.TZ = previousZone;
});

const get = async (url: string, user: User = reader): Promise<unknown> => {
  const res = await d.inject({ method: 'GET', url: `/api/v1/user-stats${url}`, headers: { authorization: `Bearer ${user.token}` } });
  expect(res.statusCode, `${url}: ${res.body.slice(0, 300)}`).toBe(200);
  return res.json();
};

describe('reading heatmaps and dates', () => {
  it('counts reading sessions per local day of a year, leaving audiobooks, hidden books and other users out', async () => {
    expect(await get('/reading/heatmap?year=2025')).toEqual([
      { date: '2025-01-01', count: 1 },
      { date: '2025-03-29', count: 1 },
      { date: '2025-03-31', count: 1 },
      { date: '2025-06-10', count: 2 },
      { date: '2025-06-11', count: 1 },
      { date: '2025-06-12', count: 1 },
    ]);
    // 2024-12-31T23:30Z is already 2025 in Berlin.
    expect(await get('/reading/heatmap?year=2024')).toEqual([{ date: '2024-07-01', count: 1 }]);
    expect(await get('/reading/heatmap?year=2023')).toEqual([]);
  });

  it('narrows to a month, across the spring clock change', async () => {
    expect(await get('/reading/heatmap/monthly?year=2025&month=3')).toEqual([
      { date: '2025-03-29', count: 1 },
      { date: '2025-03-31', count: 1 },
    ]);
    expect(await get('/reading/heatmap/monthly?year=2025&month=6')).toEqual([
      { date: '2025-06-10', count: 2 },
      { date: '2025-06-11', count: 1 },
      { date: '2025-06-12', count: 1 },
    ]);
  });

  it('lists every reading day there has been', async () => {
    expect(await get('/reading/dates')).toEqual([
      { date: '2024-07-01', count: 1 },
      { date: '2025-01-01', count: 1 },
      { date: '2025-03-29', count: 1 },
      { date: '2025-03-31', count: 1 },
      { date: '2025-06-10', count: 2 },
      { date: '2025-06-11', count: 1 },
      { date: '2025-06-12', count: 1 },
    ]);
  });

  it('applies each caller’s own visibility: the admin sees the vault, a content restriction hides a book', async () => {
    expect(await get('/reading/heatmap?year=2025', admin)).toEqual([{ date: '2025-06-10', count: 1 }]);
    expect(await get('/reading/heatmap?year=2025', other)).toEqual([{ date: '2025-06-10', count: 1 }]);
  });
});

describe('the week timeline', () => {
  const entry = (bookId: number, bookTitle: string, bookType: string, startDate: string, endDate: string, seconds: number) => ({
    bookId, bookTitle, bookType, startDate, endDate, totalSessions: 1, totalDurationSeconds: seconds,
  });

  it('lists every session of the week, audiobooks included, in local date-times', async () => {
    // ISO week 24 of 2025: Monday June 9 to Sunday June 15.
    expect(await get('/reading/timeline?year=2025&week=24')).toEqual([
      entry(book.emma, 'Emma', 'PDF', '2025-06-10T09:00:00', '2025-06-10T09:25:00', 1500),
      entry(book.dune, 'Dune', 'EPUB', '2025-06-10T20:00:00', '2025-06-10T21:00:00', 3600),
      entry(book.audioOne, 'Audio One', 'AUDIOBOOK', '2025-06-10T21:00:00', '2025-06-10T21:50:00', 3000),
      entry(book.dune, 'Dune', 'EPUB', '2025-06-11T20:15:00', '2025-06-11T20:55:00', 2400),
      entry(book.dune, 'Dune', 'EPUB', '2025-06-12T08:00:00', '2025-06-12T08:15:00', 900),
      entry(book.audioOne, 'Audio One', 'AUDIOBOOK', '2025-06-14T10:00:00', '2025-06-14T10:20:00', 1200),
    ]);
  });

  it('cuts weeks at local midnight on Monday', async () => {
    expect(await get('/reading/timeline?year=2025&week=13')).toEqual([entry(book.dune, 'Dune', 'EPUB', '2025-03-29T23:30:00', '2025-03-29T23:50:00', 1200)]);
    expect(await get('/reading/timeline?year=2025&week=14')).toEqual([entry(book.dune, 'Dune', 'EPUB', '2025-03-31T00:30:00', '2025-03-31T01:00:00', 1800)]);
    // Week 1 of 2025 starts on Monday 2024-12-30.
    expect(await get('/reading/timeline?year=2025&week=1')).toEqual([entry(book.dune, 'Dune', 'EPUB', '2025-01-01T00:30:00', '2025-01-01T00:40:00', 600)]);
  });
});

describe('speed, hours and weekdays', () => {
  it('averages progress per minute per local day the sessions were recorded', async () => {
    const speed = (await get('/reading/speed?year=2025')) as { date: string; avgProgressPerMinute: number; totalSessions: number }[];
    const expected: [string, number, number][] = [
      ['2025-01-01', 0.5, 1],
      ['2025-03-29', 0.5, 1],
      ['2025-03-31', 0.5, 1],
      ['2025-05-20', 0.05, 1],
      ['2025-06-10', (0.5 + 0.8 + 0.8) / 3, 3],
      ['2025-06-11', 0.75, 1],
      ['2025-06-12', 10 / 15, 1],
      ['2025-06-14', 1, 1],
    ];
    expect(speed.map((s) => s.date)).toEqual(expected.map((e) => e[0]));
    for (const [i, [, avg, n]] of expected.entries()) {
      expect(speed[i]?.avgProgressPerMinute).toBeCloseTo(avg, 10);
      expect(speed[i]?.totalSessions).toBe(n);
    }
    expect(await get('/reading/speed?year=2024')).toEqual([]);
  });

  it('sums reading sessions per local hour of the start, over all time or a period', async () => {
    expect(await get('/reading/peak-hours')).toEqual([
      { hourOfDay: 0, sessionCount: 2, totalDurationSeconds: 2400 },
      { hourOfDay: 8, sessionCount: 1, totalDurationSeconds: 900 },
      { hourOfDay: 9, sessionCount: 1, totalDurationSeconds: 1500 },
      { hourOfDay: 12, sessionCount: 1, totalDurationSeconds: 300 },
      { hourOfDay: 20, sessionCount: 2, totalDurationSeconds: 6000 },
      { hourOfDay: 23, sessionCount: 1, totalDurationSeconds: 1200 },
    ]);
    expect(await get('/reading/peak-hours?year=2025&month=6')).toEqual([
      { hourOfDay: 8, sessionCount: 1, totalDurationSeconds: 900 },
      { hourOfDay: 9, sessionCount: 1, totalDurationSeconds: 1500 },
      { hourOfDay: 20, sessionCount: 2, totalDurationSeconds: 6000 },
    ]);
    expect(await get('/reading/peak-hours?year=2024')).toEqual([{ hourOfDay: 12, sessionCount: 1, totalDurationSeconds: 300 }]);
    // A month without a year is ignored, as Grimmory ignores it.
    expect(await get('/reading/peak-hours?month=6')).toEqual(await get('/reading/peak-hours'));
  });

  it('sums sessions per local weekday, Sunday first', async () => {
    expect(await get('/reading/favorite-days')).toEqual([
      { dayOfWeek: 2, dayName: 'Monday', sessionCount: 2, totalDurationSeconds: 2100 },
      { dayOfWeek: 3, dayName: 'Tuesday', sessionCount: 2, totalDurationSeconds: 5100 },
      { dayOfWeek: 4, dayName: 'Wednesday', sessionCount: 2, totalDurationSeconds: 3000 },
      { dayOfWeek: 5, dayName: 'Thursday', sessionCount: 1, totalDurationSeconds: 900 },
      { dayOfWeek: 7, dayName: 'Saturday', sessionCount: 1, totalDurationSeconds: 1200 },
    ]);
    expect(await get('/reading/favorite-days?year=2025&month=3')).toEqual([
      { dayOfWeek: 2, dayName: 'Monday', sessionCount: 1, totalDurationSeconds: 1800 },
      { dayOfWeek: 7, dayName: 'Saturday', sessionCount: 1, totalDurationSeconds: 1200 },
    ]);
    expect(await get('/listening/favorite-days')).toEqual([
      { dayOfWeek: 3, dayName: 'Tuesday', sessionCount: 2, totalDurationSeconds: 3600 },
      { dayOfWeek: 7, dayName: 'Saturday', sessionCount: 1, totalDurationSeconds: 1200 },
    ]);
    expect(await get('/listening/peak-hours?year=2025')).toEqual([
      { hourOfDay: 7, sessionCount: 1, totalDurationSeconds: 600 },
      { hourOfDay: 10, sessionCount: 1, totalDurationSeconds: 1200 },
      { hourOfDay: 21, sessionCount: 1, totalDurationSeconds: 3000 },
    ]);
  });

  it('plots the year’s sessions newest first as local hour, minutes and weekday', async () => {
    expect(await get('/reading/session-scatter?year=2025')).toEqual([
      { hourOfDay: 10, durationMinutes: 20, dayOfWeek: 7 },
      { hourOfDay: 8, durationMinutes: 15, dayOfWeek: 5 },
      { hourOfDay: 20.25, durationMinutes: 40, dayOfWeek: 4 },
      { hourOfDay: 21, durationMinutes: 50, dayOfWeek: 3 },
      { hourOfDay: 20, durationMinutes: 60, dayOfWeek: 3 },
      { hourOfDay: 9, durationMinutes: 25, dayOfWeek: 3 },
      { hourOfDay: 7, durationMinutes: 10, dayOfWeek: 3 },
      { hourOfDay: 0.5, durationMinutes: 30, dayOfWeek: 2 },
      { hourOfDay: 23.5, durationMinutes: 20, dayOfWeek: 7 },
      { hourOfDay: 0.5, durationMinutes: 10, dayOfWeek: 4 },
    ]);
    expect(await get('/listening/session-scatter')).toEqual([
      { hourOfDay: 10, durationMinutes: 20, dayOfWeek: 7 },
      { hourOfDay: 21, durationMinutes: 50, dayOfWeek: 3 },
      { hourOfDay: 7, durationMinutes: 10, dayOfWeek: 3 },
    ]);
  });
});

describe('genres and books', () => {
  it('sums sessions per category, most sessions first', async () => {
    expect(await get('/reading/genres')).toEqual([
      { genre: 'Classics', bookCount: 2, totalSessions: 8, totalDurationSeconds: 12_300, averageSessionsPerBook: 4 },
      { genre: 'Science Fiction', bookCount: 2, totalSessions: 8, totalDurationSeconds: 14_700, averageSessionsPerBook: 4 },
      { genre: 'Romance', bookCount: 1, totalSessions: 2, totalDurationSeconds: 1800, averageSessionsPerBook: 2 },
    ]);
    expect(await get('/listening/genres')).toEqual([{ genre: 'Science Fiction', bookCount: 1, totalSessions: 2, totalDurationSeconds: 4200, averageSessionsPerBook: 2 }]);
  });

  it('spans each book read in the year from its first session to its last', async () => {
    expect(await get('/reading/book-timeline?year=2025')).toEqual([
      { bookId: book.dune, title: 'Dune', pageCount: 412, firstSessionDate: '2025-01-01', lastSessionDate: '2025-06-12', totalSessions: 6, totalDurationSeconds: 10_500, maxProgress: 1, readStatus: 'READ' },
      { bookId: book.audioTwo, title: 'Audio Two', pageCount: null, firstSessionDate: '2025-05-20', lastSessionDate: '2025-05-20', totalSessions: 1, totalDurationSeconds: 600, maxProgress: 0.99, readStatus: 'ABANDONED' },
      { bookId: book.emma, title: 'Emma', pageCount: null, firstSessionDate: '2025-06-10', lastSessionDate: '2025-06-10', totalSessions: 1, totalDurationSeconds: 1500, maxProgress: 0.2, readStatus: 'READING' },
      { bookId: book.audioOne, title: 'Audio One', pageCount: null, firstSessionDate: '2025-06-10', lastSessionDate: '2025-06-14', totalSessions: 2, totalDurationSeconds: 4200, maxProgress: 0.6, readStatus: 'READ' },
    ]);
  });

  it('scores the grip of finished books read in two sessions or more', async () => {
    expect(await get('/reading/page-turner-scores')).toEqual([
      {
        bookId: book.dune, bookTitle: 'Dune', categories: ['Classics', 'Science Fiction'], pageCount: 412, personalRating: 9,
        // Durations 600,1200,1800,3600,2400,900: slope 20700/105; whole hours between sessions 2110,23,1723,23,11: slope −419.8;
        // last quarter (2400, 900) shorter on average than the rest: no burst. 35 + 35 + 0.
        gripScore: 70, totalSessions: 6, avgSessionDurationSeconds: 1750, sessionAcceleration: 197.14, gapReduction: -419.8, finishBurst: false,
      },
      {
        bookId: book.audioOne, bookTitle: 'Audio One', categories: ['Science Fiction'], pageCount: null, personalRating: null,
        // Slope −1800 → 0; one gap only → 0 → 17.5; no burst.
        gripScore: 18, totalSessions: 2, avgSessionDurationSeconds: 2100, sessionAcceleration: -1800, gapReduction: 0, finishBurst: false,
      },
    ]);
  });

  it('races the books finished in the local year, session by session', async () => {
    const race = (bookId: number, bookTitle: string, sessionDate: string, endProgress: number) => ({ bookId, bookTitle, sessionDate, endProgress });
    expect(await get('/reading/completion-race?year=2025')).toEqual([
      race(book.dune, 'Dune', '2024-12-31T23:30:00.000Z', 5),
      race(book.dune, 'Dune', '2025-03-29T22:30:00.000Z', 15),
      race(book.dune, 'Dune', '2025-03-30T22:30:00.000Z', 30),
      race(book.dune, 'Dune', '2025-06-10T18:00:00.000Z', 60),
      race(book.dune, 'Dune', '2025-06-11T18:15:00.000Z', 90),
      race(book.dune, 'Dune', '2025-06-12T06:00:00.000Z', 100),
      race(book.audioOne, 'Audio One', '2025-06-10T19:00:00.000Z', 40),
      race(book.audioOne, 'Audio One', '2025-06-14T08:00:00.000Z', 60),
    ]);
    // Dune was finished at 2024-12-31T23:30Z: 2025 in Berlin.
    expect(await get('/reading/completion-race?year=2024')).toEqual([]);
  });
});

describe('completions and distributions', () => {
  it('breaks the year’s settled books down by local month and status', async () => {
    const months = (await get('/reading/completion-timeline?year=2025')) as { statusBreakdown: Record<string, number> }[];
    expect(months).toEqual([
      { year: 2025, month: 6, totalBooks: 3, statusBreakdown: { READING: 1, READ: 1, ABANDONED: 1 }, finishedBooks: 1, completionRate: 33.33 },
      { year: 2025, month: 1, totalBooks: 1, statusBreakdown: { READ: 1 }, finishedBooks: 1, completionRate: 100 },
    ]);
    expect(Object.keys(months[0]?.statusBreakdown ?? {})).toEqual(['READING', 'READ', 'ABANDONED']);
    expect(await get('/reading/completion-timeline?year=2024')).toEqual([]);
  });

  it('counts finishes per local month over the last ten years', async () => {
    const expected = [
      ...(new Date().getFullYear() - 9 <= 2017 ? [{ year: 2017, month: 1, count: 1 }] : []),
      { year: 2025, month: 1, count: 1 },
      { year: 2025, month: 6, count: 1 },
    ];
    expect(await get('/reading/book-completion-heatmap')).toEqual(expected);
  });

  it('spreads the visible books over ratings, statuses and progress', async () => {
    expect(await get('/reading/book-distributions')).toEqual({
      ratingDistribution: [
        { rating: 7, count: 1 },
        { rating: 9, count: 2 },
      ],
      statusDistribution: [
        { status: 'UNREAD', count: 1 },
        { status: 'READING', count: 1 },
        { status: 'READ', count: 2 },
        { status: 'ABANDONED', count: 1 },
      ],
      progressDistribution: [
        { range: 'Not Started', min: 0, max: 0, count: 1 },
        { range: 'Just Started', min: 1, max: 25, count: 1 },
        { range: 'Getting Into It', min: 26, max: 50, count: 1 },
        { range: 'Halfway Through', min: 51, max: 75, count: 0 },
        { range: 'Almost Done', min: 76, max: 99, count: 1 },
        { range: 'Completed', min: 100, max: 100, count: 1 },
      ],
    });
    const theirs = (await get('/reading/book-distributions', other)) as { ratingDistribution: unknown };
    expect(theirs.ratingDistribution).toEqual([{ rating: 1, count: 1 }]);
  });
});

describe('streaks', () => {
  it('counts the run up to today, the longest run and the last 365 days', async () => {
    const today = localDayOf(Date.now());
    const at = (daysAgo: number): number => {
      const date = new Date((today - daysAgo) * DAY);
      return localMidnight(date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate()) + 12 * HOUR;
    };
    for (const daysAgo of [0, 1, 2, 40, 39, 38, 37, 36, 400]) await session({ user: streaker, book: book.dune, type: 'EPUB', start: at(daysAgo), seconds: 60 });
    await session({ user: streaker, book: book.audioOne, type: 'AUDIOBOOK', start: at(3), seconds: 60 });
    const streak = (await get('/reading/streak', streaker)) as { currentStreak: number; longestStreak: number; totalReadingDays: number; last52Weeks: { date: string; active: boolean }[] };
    expect(streak).toMatchObject({ currentStreak: 3, longestStreak: 5, totalReadingDays: 9 });
    expect(streak.last52Weeks).toHaveLength(365);
    const active = streak.last52Weeks.filter((w) => w.active).map((w) => streak.last52Weeks.indexOf(w));
    expect(active).toEqual([364 - 40, 364 - 39, 364 - 38, 364 - 37, 364 - 36, 362, 363, 364]);
    const now = new Date();
    const pad = (n: number): string => String(n).padStart(2, '0');
    expect(streak.last52Weeks[364]?.date).toBe(`${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`);
    // The admin read on one day, long ago.
    expect(await get('/reading/streak', admin)).toMatchObject({ currentStreak: 0, longestStreak: 1, totalReadingDays: 1 });
  });
});

describe('listening', () => {
  it('counts listening per local day of a month in sessions and minutes', async () => {
    expect(await get('/listening/heatmap/monthly?year=2025&month=6')).toEqual([
      { date: '2025-06-10', sessions: 1, durationMinutes: 50 },
      { date: '2025-06-14', sessions: 1, durationMinutes: 20 },
    ]);
    expect(await get('/listening/heatmap/monthly?year=2025&month=5')).toEqual([{ date: '2025-05-20', sessions: 1, durationMinutes: 10 }]);
  });

  it('reports completion, the finish funnel and the longest audiobooks from session progress', async () => {
    expect(await get('/listening/completion')).toEqual({
      totalAudiobooks: 2,
      completed: 1,
      inProgressCount: 1,
      inProgress: [{ bookId: book.audioOne, title: 'Audio One', progressPercent: 60, totalDurationSeconds: 36_000, listenedDurationSeconds: 4200 }],
    });
    expect(await get('/listening/finish-funnel')).toEqual({ totalStarted: 2, reached25: 2, reached50: 2, reached75: 1, completed: 1 });
    expect(await get('/listening/longest-books')).toEqual([
      { bookId: book.audioOne, title: 'Audio One', totalDurationSeconds: 36_000, listenedDurationSeconds: 4200, progressPercent: 60 },
      { bookId: book.audioTwo, title: 'Audio Two', totalDurationSeconds: 7200, listenedDurationSeconds: 600, progressPercent: 99 },
    ]);
  });

  it('paces finished audiobooks per local month with that month’s listening', async () => {
    expect(await get('/listening/monthly-pace')).toEqual([{ year: 2025, month: 6, booksCompleted: 1, totalListeningSeconds: 4200 }]);
    expect(await get('/listening/monthly-pace?months=0')).toEqual([]);
  });

  it('sums listening per author, most listened first', async () => {
    expect(await get('/listening/authors')).toEqual([
      { author: 'Narrator X', bookCount: 2, totalSessions: 3, totalDurationSeconds: 4800 },
      { author: 'Author A', bookCount: 1, totalSessions: 2, totalDurationSeconds: 4200 },
    ]);
  });

  it('folds the last weeks of listening into ISO weeks', async () => {
    const now = Date.now();
    for (const [ago, seconds] of [[1 * DAY, 600], [2 * DAY, 900], [30 * 7 * DAY, 100]] as const) {
      await session({ user: listener, book: book.audioTwo, type: 'AUDIOBOOK', start: now - ago, seconds });
    }
    const weekOf = (ms: number) => isoWeekOfDay(localDayOf(ms));
    const recent = [weekOf(now - 2 * DAY), weekOf(now - DAY)];
    const expected = recent[0]?.week === recent[1]?.week
      ? [{ ...recent[0], totalDurationSeconds: 1500, sessions: 2 }]
      : [{ ...recent[0], totalDurationSeconds: 900, sessions: 1 }, { ...recent[1], totalDurationSeconds: 600, sessions: 1 }];
    expect(await get('/listening/weekly-trend', listener)).toEqual(expected);
    expect(await get('/listening/weekly-trend?weeks=1', listener)).toEqual(expected);
    expect(await get('/listening/weekly-trend?weeks=0', listener)).toEqual([]);
    expect(((await get('/listening/weekly-trend?weeks=52', listener)) as unknown[]).length).toBe(expected.length + 1);
  });
});

describe('other users and permissions', () => {
  it('never mixes another user’s sessions into the caller’s', async () => {
    expect(await get('/reading/dates', other)).toEqual([{ date: '2025-06-10', count: 1 }]);
    expect(await get('/reading/genres', other)).toEqual([{ genre: 'Classics', bookCount: 1, totalSessions: 1, totalDurationSeconds: 500, averageSessionsPerBook: 1 }, { genre: 'Science Fiction', bookCount: 1, totalSessions: 1, totalDurationSeconds: 500, averageSessionsPerBook: 1 }]);
    expect(await get('/reading/page-turner-scores', other)).toEqual([]);
    expect(await get('/listening/completion', other)).toEqual({ totalAudiobooks: 0, completed: 0, inProgressCount: 0, inProgress: [] });
  });

  it('shows a session the web reader posts', async () => {
    const posted = await d.inject({
      method: 'POST',
      url: '/api/v1/reading-sessions',
      headers: { authorization: `Bearer ${other.token}` },
      payload: { bookId: book.dune, bookType: 'EPUB', startTime: '2025-08-01T21:59:00Z', endTime: '2025-08-01T22:30:00Z', durationSeconds: 1860 },
    });
    expect(posted.statusCode).toBe(202);
    expect(await get('/reading/heatmap/monthly?year=2025&month=8', other)).toEqual([{ date: '2025-08-01', count: 1 }]);
    expect(await get('/reading/heatmap/monthly?year=2025&month=8')).toEqual([]);
  });

  it('needs the user-stats permission', async () => {
    const res = await d.inject({ method: 'GET', url: '/api/v1/user-stats/reading/dates', headers: { authorization: `Bearer ${nostats.token}` } });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ status: 403, message: 'Access denied.' });
    expect((await d.inject({ method: 'GET', url: '/api/v1/user-stats/reading/dates' })).statusCode).toBe(401);
  });
});

describe('parameters', () => {
  it('takes the first and last four-digit years', async () => {
    for (const url of ['/reading/heatmap?year=1', '/reading/heatmap?year=9999', '/reading/heatmap/monthly?year=9999&month=12', '/reading/timeline?year=9999&week=54', '/reading/timeline?year=1&week=0']) {
      expect(await get(url)).toEqual([]);
    }
  });

  it.each([
    '/reading/heatmap',
    '/reading/heatmap?year=abc',
    '/reading/heatmap?year=0',
    '/reading/heatmap?year=10000',
    '/reading/heatmap/monthly?year=2025',
    '/reading/heatmap/monthly?year=2025&month=0',
    '/reading/heatmap/monthly?year=2025&month=13',
    '/reading/timeline?year=2025',
    '/reading/timeline?year=2025&week=-1',
    '/reading/timeline?year=2025&week=55',
    '/reading/speed?year=2025.5',
    '/reading/peak-hours?year=2025&month=13',
    '/reading/favorite-days?month=0',
    '/reading/completion-timeline',
    '/reading/completion-race?year=x',
    '/reading/session-scatter',
    '/reading/book-timeline?year=-3',
    '/listening/heatmap/monthly?year=2025&month=99',
    '/listening/weekly-trend?weeks=-1',
    '/listening/monthly-pace?months=-1',
    '/listening/peak-hours?year=nope',
  ])('refuses %s with the validation error body', async (url) => {
    const res = await d.inject({ method: 'GET', url: `/api/v1/user-stats${url}`, headers: { authorization: `Bearer ${reader.token}` } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ status: 400, message: 'Validation error', details: [expect.any(String)], timestamp: expect.any(String) });
  });
});

describe('the calendar the statistics use', () => {
  it('numbers weeks as ISO 8601 does', () => {
    expect(isoWeekOfDay(dayNumber(2021, 1, 3))).toEqual({ year: 2020, week: 53 });
    expect(isoWeekOfDay(dayNumber(2024, 12, 30))).toEqual({ year: 2025, week: 1 });
    expect(isoWeekOfDay(dayNumber(2025, 6, 15))).toEqual({ year: 2025, week: 24 });
  });
});

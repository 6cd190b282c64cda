// A fake Hardcover GraphQL API on 127.0.0.1 that keeps each API key's library the way Hardcover does (adding a book
// starts a read; finishing a read marks the book read), for the progress sync tests. Point Bindery at it with
// `metadataProviderBaseUrls: {"Hardcover": fake.url}` and `outgoingAllowPrivateHosts: 127.0.0.1`.
import { localDate } from '../../src/core/hardcover/progress-pusher.ts';
import { startFakeSite, type FakeRequest, type FakeSite } from './fake-site.ts';

type Json = Record<string, unknown>;

interface FakeRead {
  id: number;
  edition_id: number | null;
  started_at: string | null;
  finished_at: string | null;
  progress: number | null;
  progress_pages: number | null;
}

export interface FakeUserBook {
  id: number;
  book_id: number;
  status_id: number;
  edition_id: number | null;
  user_book_reads: FakeRead[];
}

/** One GraphQL document answered (failed requests are not recorded). */
export interface HardcoverCall {
  op: string;
  authorization: string | undefined;
  variables: Json;
}

export const DUNE_ISBN = '9780441013593';
export const EMMA_HARDCOVER_ID = '200';

/** Hardcover's side: Dune (found by ISBN) and Emma (found by its Hardcover id). */
const BOOKS = [
  { id: 100, slug: 'dune', pages: 380, editions: [{ id: 101, pages: 412, isbn_13: DUNE_ISBN, isbn_10: null }], default_ebook_edition: { id: 102, pages: 500 }, default_physical_edition: { id: 101, pages: 412 } },
  { id: 200, slug: 'emma', pages: 320, editions: [{ id: 201, pages: 300, isbn_13: '9780141439587', isbn_10: null }], default_ebook_edition: { id: 202, pages: 350 }, default_physical_edition: null },
];

export interface FakeHardcover {
  /** The base URL (the metadata provider's); GraphQL is at `${url}/graphql`. */
  url: string;
  site: FakeSite;
  calls: HardcoverCall[];
  /** Each API key's library. */
  libraries: Map<string, FakeUserBook[]>;
  /** Answer every request with this HTTP status. */
  failWith: number | undefined;
  delayMs: number;
  /** Holds every request from now until the returned function is called; resolves `arrived` when the first comes. */
  hold(): { arrived: Promise<void>; release: () => void };
  /** The page count each progress update set (the last step of each push), in order. */
  pagesSent(): number[];
  /** Forgets the calls and requests, and stops failing, delaying and holding. */
  reset(): void;
  close(): Promise<void>;
}

function operation(query: string): string {
  return /(?:query|mutation)\s+(\w+)/.exec(query)?.[1] ?? 'anonymous';
}

function bookRow(book: (typeof BOOKS)[number], query: string, vars: Json): Json {
  const isbns: unknown[] = [vars.isbn13, vars.isbn10].filter((v) => typeof v === 'string');
  const editions = book.editions.filter((e) => isbns.includes(e.isbn_13) || isbns.includes(e.isbn_10));
  return {
    id: book.id,
    pages: book.pages,
    ...(query.includes('default_ebook_edition') ? { default_ebook_edition: book.default_ebook_edition, default_physical_edition: book.default_physical_edition } : {}),
    ...(query.includes('editions(') ? { editions: editions.map((e) => ({ id: e.id, pages: e.pages })) } : {}),
  };
}

export async function startFakeHardcover(): Promise<FakeHardcover> {
  const site = await startFakeSite();
  let nextId = 1000;
  let gate: { opened: Promise<void>; open: () => void; arrived: () => void } | undefined;

  /** Answers one GraphQL document the way Hardcover would, for the library of the bearer's key. */
  function answer(request: FakeRequest): Json {
    const { query, variables = {} } = JSON.parse(request.body) as { query: string; variables?: Json };
    const op = operation(query);
    const authorization = request.headers.authorization as string | undefined;
    fake.calls.push({ op, authorization, variables });
    const key = (authorization ?? '').replace(/^Bearer /, '');
    const mine = fake.libraries.get(key) ?? [];
    fake.libraries.set(key, mine);
    const today = localDate();
    switch (op) {
      case 'BinderyBook': {
        const book = BOOKS.find((b) => b.id === variables.bookId || b.slug === variables.slug);
        return { data: { books: book ? [bookRow(book, query, variables)] : [] } };
      }
      case 'BinderyBookByIsbn': {
        const book = BOOKS.find((b) => b.editions.some((e) => e.isbn_13 === variables.isbn13 || e.isbn_10 === variables.isbn10));
        return { data: { books: book ? [bookRow(book, query, variables)] : [] } };
      }
      case 'BinderyUserBook':
        return { data: { me: [{ user_books: mine.filter((u) => u.book_id === variables.bookId) }] } };
      case 'BinderyAddUserBook': {
        const object = variables.object as { book_id: number; edition_id: number; status_id: number };
        const read: FakeRead = { id: nextId++, edition_id: object.edition_id, started_at: today, finished_at: null, progress: 0, progress_pages: 0 };
        const added: FakeUserBook = { id: nextId++, book_id: object.book_id, status_id: object.status_id, edition_id: object.edition_id, user_book_reads: [read] };
        mine.push(added);
        return { data: { insert_user_book: { error: null, user_book: added } } };
      }
      case 'BinderyResumeUserBook': {
        const userBook = mine.find((u) => u.id === variables.id);
        if (!userBook) return { data: { update_user_book: { id: null, error: 'not found', user_book: null } } };
        const object = variables.object as { edition_id: number; status_id: number };
        if (userBook.status_id !== object.status_id) userBook.user_book_reads.push({ id: nextId++, edition_id: object.edition_id, started_at: today, finished_at: null, progress: 0, progress_pages: 0 });
        Object.assign(userBook, { edition_id: object.edition_id, status_id: object.status_id });
        return { data: { update_user_book: { id: userBook.id, error: null, user_book: userBook } } };
      }
      case 'BinderyUpdateRead': {
        const object = variables.object as Partial<FakeRead>;
        const userBook = mine.find((u) => u.user_book_reads.some((r) => r.id === variables.id));
        const read = userBook?.user_book_reads.find((r) => r.id === variables.id);
        if (!userBook || !read) return { data: { update_user_book_read: { id: null, error: 'not found' } } };
        Object.assign(read, object);
        if (object.finished_at) userBook.status_id = 3;
        return { data: { update_user_book_read: { id: read.id, error: null } } };
      }
      case 'BinderyStartRead': {
        const object = variables.read as Partial<FakeRead>;
        const userBook = mine.find((u) => u.id === variables.userBookId);
        if (!userBook) return { data: { insert_user_book_read: { error: 'not found', user_book_read: null } } };
        const read: FakeRead = { id: nextId++, edition_id: null, started_at: null, finished_at: null, progress: null, progress_pages: null, ...object };
        userBook.user_book_reads.push(read);
        if (object.finished_at) userBook.status_id = 3;
        return { data: { insert_user_book_read: { error: null, user_book_read: { id: read.id } } } };
      }
      default:
        return { errors: [{ message: `unknown operation ${op}` }] };
    }
  }

  const fake: FakeHardcover = {
    url: site.url,
    site,
    calls: [],
    libraries: new Map(),
    failWith: undefined,
    delayMs: 0,
    hold() {
      let open!: () => void;
      let arrived!: () => void;
      const opened = new Promise<void>((resolve) => (open = resolve));
      const first = new Promise<void>((resolve) => (arrived = resolve));
      gate = { opened, open, arrived };
      return {
        arrived: first,
        release: () => {
          open();
          gate = undefined;
        },
      };
    },
    pagesSent: () => fake.calls.filter((c) => c.op === 'BinderyUpdateRead').map((c) => (c.variables.object as { progress_pages: number }).progress_pages),
    reset() {
      fake.calls = [];
      site.requests.length = 0;
      fake.failWith = undefined;
      fake.delayMs = 0;
      gate?.open();
      gate = undefined;
    },
    close: () => {
      gate?.open();
      return site.close();
    },
  };

  site.on('POST', '/graphql', async (request) => {
    const held = gate;
    if (held) {
      held.arrived();
      await held.opened;
    }
    if (fake.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, fake.delayMs));
    if (fake.failWith !== undefined) return { status: fake.failWith, json: { message: 'upstream trouble' } };
    return { json: answer(request) };
  });
  return fake;
}

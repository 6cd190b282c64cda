import { conformancePath } from '../helpers/conformance.ts';
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, it } from 'vitest';
import { MAX_ADDRESS_FAILURES, SignInPolicy } from '../../src/core/auth/login-rate-limit.ts';
import { checkCredentials, getAccount, md5Hex, saveAccount, setSyncEnabled, setSyncWithWebReader, type SyncSession } from '../../src/core/koreader/accounts.ts';
import {
  cfiToXPointer,
  cfiToXPointerPath,
  parseCfi,
  parseChapter,
  parseXPointer,
  xpointerToCfi,
  xpointerToCfiSteps,
} from '../../src/core/koreader/epub-positions.ts';
import { koreaderReadStatus } from '../../src/core/koreader/sync.ts';
import { partialMd5 } from '../../src/core/formats/hash.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { createUser } from '../../src/core/users/users.ts';
import { makeTempDir, opfDocument, writeEpub, type TempDir } from '../helpers/epub-fixtures.ts';

const VECTORS_DIR = conformancePath('kosync', 'partial-md5-vectors');

interface Vectors {
  patternGenerator: string;
  synthetic: { size: number; samples: number; digest: string }[];
  files: { file: string; size: number; digest: string }[];
  wrongVariant_firstOffset256: Record<string, string>;
  userkey_example: { password: string; 'x-auth-key': string };
}
const vectors = JSON.parse(readFileSync(`${VECTORS_DIR}/vectors.json`, 'utf8')) as Vectors;

let tmp: TempDir;
beforeAll(() => {
  tmp = makeTempDir('bindery-koreader-');
});
afterAll(() => tmp.remove());

describe('document ids (KOReader partial MD5)', () => {
  it.each(vectors.files)('$file hashes to the digest KOReader computes', async ({ file, digest }) => {
    const hash = await partialMd5(`${VECTORS_DIR}/${file}`);
    expect(hash).toBe(digest);
    expect(hash).not.toBe(vectors.wrongVariant_firstOffset256[file]);
  });

  it.each(vectors.synthetic)('a $size-byte pattern file hashes to $digest', async ({ size, digest }) => {
    const bytes = Buffer.alloc(size);
    for (let i = 0; i < size; i++) bytes[i] = (i * 31 + (i >> 8)) % 256;
    const path = tmp.file(`pattern-${size}.bin`);
    writeFileSync(path, bytes);
    expect(await partialMd5(path)).toBe(digest);
  });

  it('derives the x-auth-key of the reference example', () => {
    expect(md5Hex(vectors.userkey_example.password)).toBe(vectors.userkey_example['x-auth-key']);
  });
});

describe('read status from a KOReader percentage', () => {
  it('is READ from 99.5 %, READING from 0.25 %, UNREAD below, computed in 32-bit floats', () => {
    const cases: [number, string][] = [
      [0, 'UNREAD'],
      [0.001, 'UNREAD'],
      [0.0025, 'UNREAD'], // 0.0025f * 100 = 0.2499999944…
      [0.0026, 'READING'],
      [0.42, 'READING'],
      [0.9949, 'READING'],
      [0.995, 'READ'], // 0.995f * 100 = 99.500000476…
      [1, 'READ'],
    ];
    for (const [fraction, status] of cases) expect(koreaderReadStatus(fraction), String(fraction)).toBe(status);
  });
});

describe('XPointer and CFI notation', () => {
  it('parses XPointers with and without indexes, text nodes and offsets', () => {
    expect(parseXPointer('/body/DocFragment[11]/body/div/p[7]/text().123')).toEqual({ spineIndex: 10, steps: [{ name: 'div', index: 1 }, { name: 'p', index: 7 }], textIndex: 1, offset: 123 });
    expect(parseXPointer('/body/DocFragment/body/ul[2]/li[5]/text()[3].16')).toEqual({ spineIndex: 0, steps: [{ name: 'ul', index: 2 }, { name: 'li', index: 5 }], textIndex: 3, offset: 16 });
    expect(parseXPointer('/body/DocFragment[3]/body/p[12]/sup[3]/a[3].0')).toMatchObject({ spineIndex: 2, textIndex: undefined, offset: 0 });
    expect(parseXPointer('/body/DocFragment[4]')).toEqual({ spineIndex: 3, steps: [], textIndex: undefined, offset: 0 });
    for (const bad of ['', '56', '/FictionBook/body/section[2]/p/text().3', '/body/DocFragment[0]/body', '/body/DocFragment[2]/head/title', '/body/DocFragment[2]/body/text()/p']) {
      expect(parseXPointer(bad), bad).toBeUndefined();
    }
  });

  it('parses CFIs: assertions, ranges, escapes and terminal parameters', () => {
    expect(parseCfi('epubcfi(/6/14[chap05ref]!/4[body01]/10[para05]/3:10)')).toEqual({ spineIndex: 6, steps: [4, 10, 3], offset: 10 });
    expect(parseCfi('epubcfi(/6/4!/4/2,/1:0,/3:20)')).toEqual({ spineIndex: 1, steps: [4, 2, 1], offset: 0 });
    expect(parseCfi('epubcfi(/6/2[a^]b]!/4[x^,y]/2/1:5[;s=a])')).toEqual({ spineIndex: 0, steps: [4, 2, 1], offset: 5 });
    expect(parseCfi('epubcfi(/6/8!/4/6~12.5)')).toEqual({ spineIndex: 3, steps: [4, 6], offset: undefined });
    for (const bad of ['', 'epubcfi()', 'epubcfi(/6/3!/4)', 'epubcfi(/6!/4)', '/6/4!/4', 'epubcfi(/6/4!/x)']) expect(parseCfi(bad), bad).toBeUndefined();
  });
});

const CHAPTER = `<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>c</title></head>
<body>
  <h1>Title</h1>
  <div>
    <p>First paragraph.</p>
    <p>Second <b>bold</b> and   then
       the tail&nbsp;end.</p>
    <p>Third<!-- note --> joined.</p>
  </div>
</body></html>`;

describe('positions inside one chapter', () => {
  const root = parseChapter(CHAPTER);

  it('walks element and text steps both ways', () => {
    if (!root) throw new Error('chapter did not parse');
    // p[2] is the 2nd <p> of the div; its text()[2] is the run after <b>; offset 9 in crengine's collapsed text.
    const xp = parseXPointer('/body/DocFragment[2]/body/div/p[2]/text()[2].9');
    if (!xp) throw new Error('xpointer did not parse');
    const walked = xpointerToCfiSteps(root, xp);
    // " and   then\n       the tail end." collapsed is " and then the tail end.": offset 9 is after "then".
    expect(walked).toEqual({ steps: [4, 4, 4, 3], offset: 11 });
    const back = cfiToXPointerPath(root, { spineIndex: 1, steps: walked?.steps ?? [], offset: walked?.offset });
    expect(back).toBe('/body/div/p[2]/text()[2].9');
  });

  it('treats text split by a comment as one run and skips white space between blocks', () => {
    if (!root) throw new Error('chapter did not parse');
    expect(cfiToXPointerPath(root, { spineIndex: 0, steps: [4, 4, 6, 1], offset: 8 })).toBe('/body/div/p[3]/text().8');
    // The blank run between <h1> and <div> is not a crengine node: the position falls back to the element.
    expect(cfiToXPointerPath(root, { spineIndex: 0, steps: [4, 3], offset: 1 })).toBe('/body.0');
    expect(cfiToXPointerPath(root, { spineIndex: 0, steps: [4, 2], offset: undefined })).toBe('/body/h1.0');
  });

  it('cuts an unknown path back to the deepest element both sides have', () => {
    if (!root) throw new Error('chapter did not parse');
    const xp = parseXPointer('/body/DocFragment[1]/body/div/p[9]/text().3');
    expect(xp && xpointerToCfiSteps(root, xp)).toEqual({ steps: [4, 4], offset: undefined });
    expect(cfiToXPointerPath(root, { spineIndex: 0, steps: [4, 4, 40, 1], offset: 2 })).toBe('/body/div.0');
    expect(cfiToXPointerPath(root, { spineIndex: 0, steps: [2, 2], offset: undefined })).toBeUndefined();
  });

  it('refuses documents that declare entities', () => {
    expect(parseChapter('<!DOCTYPE x [<!ENTITY a "b">]><html><body>&a;</body></html>')).toBeUndefined();
  });
});

describe('positions inside EPUB files', () => {
  it('maps a KOReader position in leaves.epub to a web reader CFI and back', async () => {
    const epub = `${VECTORS_DIR}/leaves.epub`;
    // DocFragment[8] is the spine's 8th item ("To Foreign Lands"): body > h2, div, p, div; the first div holds lines split by <br>.
    const cfi = await xpointerToCfi(epub, '/body/DocFragment[8]/body/div/text()[2].4');
    // The line starts with a no-break space, which crengine keeps as it is: offsets agree.
    expect(cfi).toBe('epubcfi(/6/16!/4/4/3:4)');
    expect(await cfiToXPointer(epub, cfi ?? '')).toBe('/body/DocFragment[8]/body/div[1]/text()[2].4');
    // The web reader's range CFIs start where their start point is.
    expect(await cfiToXPointer(epub, 'epubcfi(/6/16[item522]!/4[x]/4,/3:4,/5:10)')).toBe('/body/DocFragment[8]/body/div[1]/text()[2].4');
    expect(await xpointerToCfi(epub, '/body/DocFragment[900]/body/p.0')).toBeUndefined();
    expect(await xpointerToCfi(`${VECTORS_DIR}/tall.pdf`, '/body/DocFragment[1]/body.0')).toBeUndefined();
  });

  it('names the fragment without an index when the book has a single spine item', async () => {
    const path = tmp.file('single.epub');
    await writeEpub(path, {
      opf: opfDocument({ metadata: '<dc:title>One</dc:title>', manifest: '<item id="c" href="c.xhtml" media-type="application/xhtml+xml"/>', spine: '<itemref idref="c"/>' }),
      files: { 'OEBPS/c.xhtml': CHAPTER },
    });
    expect(await cfiToXPointer(path, 'epubcfi(/6/2!/4/4/2/1:6)')).toBe('/body/DocFragment/body/div/p[1]/text().6');
    expect(await xpointerToCfi(path, '/body/DocFragment/body/div/p/text().6')).toBe('epubcfi(/6/2!/4/4/2/1:6)');
  });
});

describe('the KOReader account', () => {
  let store: Store;
  let userId: number;
  let otherId: number;
  beforeEach(async () => {
    store = await openStore(':memory:');
    userId = await createUser(store.db, { username: 'reader', password: 'reader-password', name: 'Reader', permissions: { canSyncKoReader: true } });
    otherId = await createUser(store.db, { username: 'other', password: 'other-password', name: 'Other', permissions: {} });
  });
  afterEach(async () => store.close());

  it('is created and updated per user, keeping the switches; neither the password nor its MD5 is stored or shown', async () => {
    await expect(getAccount(store.db, userId)).rejects.toMatchObject({ code: 'NOT_FOUND', message: `Koreader user not found for BookLore user ID: ${userId}` });
    const created = await saveAccount(store.db, userId, { username: 'kindle', password: 'secret' });
    expect(created).toEqual({ id: created.id, username: 'kindle', password: '', passwordMD5: null, syncEnabled: false, syncWithWebReader: false });
    await setSyncEnabled(store.db, userId, true);
    await setSyncWithWebReader(store.db, userId, true);
    const renamed = await saveAccount(store.db, userId, { username: 'kobo', password: 'other secret' });
    expect(renamed).toMatchObject({ id: created.id, username: 'kobo', password: '', passwordMD5: null, syncEnabled: true, syncWithWebReader: true });
    expect(await getAccount(store.db, userId)).toEqual(renamed);
    const row = await store.db.selectFrom('koreader_user').selectAll().executeTakeFirstOrThrow();
    const stored = JSON.stringify(row);
    expect(stored).not.toContain('other secret');
    expect(stored).not.toContain(md5Hex('other secret'));
    expect(row.key_hash).toMatch(/^\$2[aby]\$10\$/);
  });

  it('refuses a username another user holds, blank names and empty passwords', async () => {
    await saveAccount(store.db, userId, { username: 'kindle', password: 'secret' });
    await expect(saveAccount(store.db, otherId, { username: 'kindle', password: 'x' })).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(saveAccount(store.db, otherId, { username: '  ', password: 'x' })).rejects.toMatchObject({ code: 'INVALID' });
    await expect(saveAccount(store.db, otherId, { username: 'a'.repeat(101), password: 'x' })).rejects.toMatchObject({ code: 'INVALID' });
    await expect(saveAccount(store.db, otherId, { username: 'kobo', password: '' })).rejects.toMatchObject({ code: 'INVALID' });
    await expect(saveAccount(store.db, otherId, { username: 'kobo' })).rejects.toMatchObject({ code: 'INVALID' });
    await expect(setSyncEnabled(store.db, otherId, true)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('checks device credentials: key in any letter case, sync switched on, permission held', async () => {
    await saveAccount(store.db, userId, { username: 'kindle', password: 'secret' });
    const key = md5Hex('secret');
    const check = (username: string | undefined, presented: string): ReturnType<typeof checkCredentials> => checkCredentials(store.db, new SignInPolicy(store.bookkeeping), '10.0.0.1', username, presented);
    expect(await check(undefined, key)).toBe('MISSING');
    expect(await check('kindle', '')).toBe('MISSING');
    expect(await check('kindle', md5Hex('wrong'))).toBe('BAD_CREDENTIALS');
    expect(await check('kindle', 'secret')).toBe('BAD_CREDENTIALS');
    expect(await check('nobody', key)).toBe('BAD_CREDENTIALS');
    expect(await check('kindle', key)).toBe('SYNC_DISABLED');
    await setSyncEnabled(store.db, userId, true);
    const session = (await check('kindle', key.toUpperCase())) as SyncSession;
    expect(session).toMatchObject({ username: 'kindle', syncWithWebReader: false, principal: { userId } });
    await store.db.updateTable('user_permissions').set({ permission_sync_koreader: 0 }).where('user_id', '=', userId).execute();
    expect(await check('kindle', key)).toBe('NO_PERMISSION');
    await store.db.updateTable('user_permissions').set({ permission_admin: 1 }).where('user_id', '=', userId).execute();
    expect(await check('kindle', key)).toMatchObject({ username: 'kindle' });
  });

  it('limits failed keys with the shared sign-in policy, before any password work', async () => {
    await saveAccount(store.db, userId, { username: 'kindle', password: 'secret' });
    await setSyncEnabled(store.db, userId, true);
    const policy = new SignInPolicy(store.bookkeeping);
    for (let i = 0; i < 5; i++) expect(await checkCredentials(store.db, policy, '10.0.0.2', 'kindle', md5Hex(`guess-${i}`))).toBe('BAD_CREDENTIALS');
    // The right key is refused too, for that name, from any address.
    expect(await checkCredentials(store.db, policy, '10.0.0.2', 'kindle', md5Hex('secret'))).toBe('RATE_LIMITED');
    // The address is blocked on other names once it has used up its own, larger count.
    expect(await checkCredentials(store.db, policy, '10.0.0.2', 'other-name', md5Hex('secret'))).toBe('BAD_CREDENTIALS');
    for (let i = 6; i < MAX_ADDRESS_FAILURES; i++) await policy.recordFailure('10.0.0.2', 'koreader', `guess-${i}`);
    expect(await checkCredentials(store.db, policy, '10.0.0.2', 'other-name', md5Hex('secret'))).toBe('RATE_LIMITED');
    expect(await policy.isBlocked('10.0.0.3', 'koreader', 'kindle')).toBe(true);
    expect(await policy.isBlocked('10.0.0.3', 'login', 'kindle')).toBe(false);
  });

  it('goes away with its user', async () => {
    await saveAccount(store.db, userId, { username: 'kindle', password: 'secret' });
    await store.db.deleteFrom('users').where('id', '=', userId).execute();
    expect(await store.db.selectFrom('koreader_user').selectAll().execute()).toEqual([]);
  });
});

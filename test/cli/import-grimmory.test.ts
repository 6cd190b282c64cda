// `bindery import grimmory` against a real MariaDB server (Debian's mariadb-server) started for this file, and against
// a dump of it made by the real mariadb-dump.
import bcrypt from 'bcryptjs';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyPassword } from '../../src/core/users/users.ts';
import { catalogSnapshot, readRows } from '../helpers/catalog-read.ts';
import { runCli } from '../helpers/cli.ts';
import { startTestDaemon } from '../helpers/daemon.ts';
import { koboDevice } from '../helpers/kobo-device.ts';
import { createGrimmorySchema, GRIMMORY_PASSWORD, KOBO_TOKEN, seedGrimmory, type SeededFiles } from '../helpers/grimmory-seed.ts';
import { mariadbAvailable, startMariaDb, type MariaDb } from '../helpers/mariadb.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';

const available = mariadbAvailable();

// CI installs MariaDB (scripts/test-deps): there a missing server fails the file instead of skipping it.
describe.skipIf(!available && !process.env.CI)('bindery import grimmory', () => {
  let server: MariaDb;
  let tmp: TempDir;
  let files: SeededFiles;
  let url: string;

  beforeAll(async () => {
    server = await startMariaDb();
    tmp = makeTempDir('bindery-grimmory-');
    const c = await server.connect('grimmory');
    await createGrimmorySchema(c);
    files = await seedGrimmory(c, tmp.dir);
    await c.end();
    url = `mysql://root@127.0.0.1:${server.port}/grimmory`;
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    tmp?.remove();
  });

  const importArgs = (dataDir: string, ...extra: string[]): string[] => ['--data-dir', dataDir, '--json', 'import', 'grimmory', '--map', `/books=${files.booksDir}`, '--grimmory-data', files.grimmoryData, ...extra];

  it('a dry run reports what would come over and writes nothing', async () => {
    const dataDir = tmp.file('dry');
    const result = await runCli([...importArgs(dataDir, '--from', url, '--dry-run')]);
    expect(result.code, result.stderr).toBe(5);
    const report = JSON.parse(result.stdout);
    expect(report.dryRun).toBe(true);
    expect(report.schemaVersion).toBe('144');
    const book = report.stages.flatMap((s: { tables: unknown[] }) => s.tables).find((t: { table: string }) => t.table === 'book');
    expect(book.imported).toBe(4);
    expect(book.skipped).toEqual([{ reason: 'no file of the book is on disk', count: 1, examples: [join(files.booksDir, 'lost', 'gone.epub')] }]);
    expect(report.notImported.map((n: { table: string }) => n.table).sort()).toEqual(['book_award', 'jwt_secret']);
    expect(report.droppedFields.map((d: { table: string; fields: string[] }) => `${d.table}: ${d.fields.join(', ')}`)).toEqual([
      'email_provider_v2: is_default',
      'book: read_status, metadata_for_write_updated_at',
      'book_file: alt_format_current_hash',
      'book_metadata: embedding_vector, embedding_updated_at',
      'book_marks: version',
      'annotations: version',
      'book_notes_v2: version',
      'pdf_annotations: version',
    ]);
    expect(await readRows(join(dataDir, 'bindery.sqlite'), 'select count(*) as n from book')).toEqual([{ n: 0 }]);
    expect(await readRows(join(dataDir, 'bindery.sqlite'), 'select count(*) as n from import_id_map')).toEqual([{ n: 0 }]);
  });

  it('imports everything with a place in Bindery, reports the rest, and a second run changes nothing', async () => {
    const dataDir = tmp.file('live');
    const passwordFile = tmp.file('db-password');
    writeFileSync(passwordFile, '\n');
    const first = await runCli(importArgs(dataDir, '--from', url, '--password-file', passwordFile));
    expect(first.code, first.stderr + first.stdout).toBe(5);
    const catalog = join(dataDir, 'bindery.sqlite');
    const report = JSON.parse(first.stdout);
    const tables = Object.fromEntries(report.stages.flatMap((s: { tables: { table: string }[] }) => s.tables).map((t: { table: string }) => [t.table, t]));
    expect(tables.book.skipped).toEqual([{ reason: 'no file of the book is on disk', count: 1, examples: [join(files.booksDir, 'lost', 'gone.epub')] }]);
    expect(tables.book_file.skipped).toEqual([{ reason: 'its book (book_id) was not imported', count: 1, examples: ['#102'] }]);
    expect(tables.annotations).toMatchObject({ imported: 1, skipped: [{ reason: 'its book (book_id) was not imported', count: 1 }] });
    expect(tables.app_settings.skipped).toEqual([{ reason: 'no Bindery meaning', count: 2, examples: ['cover_image_resolution', 'grimmlink_experimental_flag'] }]);

    // Users keep their passwords (bcrypt from Spring), permissions, restrictions.
    const [admin] = await readRows<{ id: number; password_hash: string; email: string; created_at: string }>(catalog, "select * from users where username = 'admin'");
    expect(admin?.id).toBe(1);
    expect(await verifyPassword(GRIMMORY_PASSWORD, admin?.password_hash as string)).toBe(true);
    expect(admin?.created_at).toBe('2024-01-02T03:04:05.000Z');
    expect(await readRows(catalog, 'select id, username, locale, is_default_password from users order by id')).toEqual([
      { id: 1, username: 'admin', locale: 'en', is_default_password: 0 },
      { id: 2, username: 'reader', locale: 'de', is_default_password: 1 },
    ]);
    expect(await readRows(catalog, 'select permission_admin, permission_sync_kobo from user_permissions where user_id = 1')).toEqual([{ permission_admin: 1, permission_sync_kobo: 1 }]);
    expect(await readRows(catalog, 'select user_id, restriction_type, mode, value from user_content_restriction')).toEqual([{ user_id: 2, restriction_type: 'CATEGORY', mode: 'EXCLUDE', value: 'Horror' }]);
    expect(await readRows(catalog, 'select user_id, library_id from user_library_mapping order by user_id')).toEqual([{ user_id: 1, library_id: 1 }, { user_id: 2, library_id: 1 }]);
    // Devices keep syncing: the Kobo token, KOReader account, OPDS account.
    expect(await readRows(catalog, 'select token, two_way_progress_sync, progress_mark_as_finished_threshold from kobo_user_settings')).toEqual([{ token: KOBO_TOKEN, two_way_progress_sync: 1, progress_mark_as_finished_threshold: 98 }]);
    const koreader = await readRows<{ username: string; key_hash: string; booklore_user_id: number; sync_with_booklore_reader: number }>(catalog, 'select username, key_hash, booklore_user_id, sync_with_booklore_reader from koreader_user');
    expect(koreader).toMatchObject([{ username: 'kosync', booklore_user_id: 1, sync_with_booklore_reader: 1 }]);
    // Only a hash of the MD5 key KOReader sends is kept (docs/koreader.md), and it verifies Grimmory's password.
    expect(bcrypt.compareSync(createHash('md5').update('kopass').digest('hex'), koreader[0]?.key_hash ?? '')).toBe(true);
    expect(await readRows(catalog, 'select username, sort_order from opds_user_v2')).toEqual([{ username: 'opds-admin', sort_order: 'TITLE_ASC' }]);
    expect(await readRows(catalog, 'select entitlement_id, user_id from kobo_reading_state')).toEqual([{ entitlement_id: '10', user_id: 1 }]);
    expect(await readRows(catalog, 'select book_id, synced from kobo_library_snapshot_book')).toEqual([{ book_id: 10, synced: 1 }]);
    // Libraries with the remapped folder; books on disk with their files, ids kept.
    expect(await readRows(catalog, 'select path from library_path')).toEqual([{ path: files.booksDir }]);
    expect(await readRows(catalog, 'select id from book order by id')).toEqual([{ id: 10 }, { id: 11 }, { id: 13 }, { id: 14 }]);
    const [file] = await readRows<{ library_path_id: number; file_sub_path: string; size_bytes: number; initial_hash: string }>(catalog, 'select * from book_file where id = 100');
    expect(file).toMatchObject({ library_path_id: 1, file_sub_path: 'Le Guin', initial_hash: 'aaaa0000aaaa0000aaaa0000aaaa0000' });
    expect(file?.size_bytes).toBeGreaterThan(0);
    // Metadata with locks; the search text is Bindery's own.
    expect(await readRows(catalog, 'select title, title_locked, cover_locked, published_date, search_text from book_metadata where book_id = 10')).toEqual([
      { title: 'The Left Hand of Darkness', title_locked: 1, cover_locked: 1, published_date: '1969-03-01', search_text: 'the left hand of darkness ursula k. le guin hainish cycle 9780441478125' },
    ]);
    expect(await readRows(catalog, 'select issue_number, issue_number_locked from comic_metadata')).toEqual([{ issue_number: '1', issue_number_locked: 1 }]);
    expect(await readRows(catalog, 'select role from comic_metadata_creator_mapping')).toEqual([{ role: 'ARTIST' }]);
    // Reading data of every kind.
    expect(await readRows(catalog, 'select read_status, epub_progress, koreader_progress_percent, kobo_progress_percent, personal_rating from user_book_progress where book_id = 10')).toEqual([
      { read_status: 'READING', epub_progress: 'epubcfi(/6/4!/4/2/1:0)', koreader_progress_percent: 0.455, kobo_progress_percent: 44, personal_rating: 8 },
    ]);
    expect(await readRows(catalog, 'select date_finished from user_book_progress where book_id = 11')).toEqual([{ date_finished: '2024-01-02T03:04:05.000Z' }]);
    for (const table of ['user_book_file_progress', 'book_marks', 'annotations', 'book_notes', 'book_notes_v2', 'pdf_annotations', 'reading_sessions', 'ebook_viewer_preference', 'epub_viewer_preference', 'pdf_viewer_preference', 'new_pdf_viewer_preference', 'cbx_viewer_preference', 'magic_shelf', 'email_provider_v2', 'email_recipient_v2', 'user_email_provider_preference', 'audit_log']) {
      expect((await readRows<{ n: number }>(catalog, `select count(*) as n from ${table}`))[0]?.n, table).toBe(1);
    }
    expect(await readRows(catalog, 'select book_id, shelf_id from book_shelf_mapping order by shelf_id')).toEqual([{ book_id: 10, shelf_id: 1 }, { book_id: 10, shelf_id: 2 }]);
    expect(JSON.parse(((await readRows<{ filter_json: string }>(catalog, 'select filter_json from magic_shelf'))[0] as { filter_json: string }).filter_json).rules[0].value).toBe(1);
    expect(await readRows(catalog, "select val from app_settings where name = 'komga_api_enabled'")).toEqual([{ val: 'true' }]);
    // Covers and author photos from Grimmory's data folder.
    expect(existsSync(join(dataDir, 'covers', '10', 'cover.jpg'))).toBe(true);
    expect(existsSync(join(dataDir, 'author-images', '1', 'photo.jpg'))).toBe(true);

    const before = await catalogSnapshot(catalog);
    const second = await runCli(importArgs(dataDir, '--from', url, '--password-file', passwordFile));
    expect(second.code).toBe(5);
    const again = JSON.parse(second.stdout);
    for (const stage of again.stages) for (const table of stage.tables) expect(table.imported, table.table).toBe(0);
    expect(await catalogSnapshot(catalog)).toEqual(before);
  });

  it('reads a mariadb-dump file to the same catalog as the live server', async () => {
    const dump = tmp.file('grimmory.sql');
    execFileSync('sh', ['-c', `mariadb-dump --host=127.0.0.1 --port=${server.port} --user=root --single-transaction grimmory > '${dump}'`]);
    const fromDump = tmp.file('dump');
    const result = await runCli(importArgs(fromDump, '--from-dump', dump));
    expect(result.code, result.stderr + result.stdout).toBe(5);
    const live = await catalogSnapshot(join(tmp.file('live'), 'bindery.sqlite'));
    const dumped = await catalogSnapshot(join(fromDump, 'bindery.sqlite'));
    // Rows and fields Bindery stamps with the time of the run (seeded schedules, default creation times) differ, and
    // so do salted hashes.
    const today = new Date().toISOString().slice(0, 10);
    const stable = (s: Record<string, unknown[]>): Record<string, unknown[]> =>
      Object.fromEntries(
        Object.entries(s).map(([t, rows]) => [t, rows.map((r) => Object.fromEntries(Object.entries(r as object).filter(([k, v]) => !(typeof v === 'string' && v.startsWith(today)) && k !== 'mtime_ms' && k !== 'key_hash')))]),
      );
    expect(stable(dumped)).toEqual(stable(live));
  });

  it('the imported catalog signs users in with their Grimmory passwords and keeps the Kobo syncing with its old token', async () => {
    const daemon = await startTestDaemon({ dataDir: tmp.file('live') });
    try {
      const login = (username: string, password: string) => daemon.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username, password } });
      expect((await login('admin', GRIMMORY_PASSWORD)).statusCode).toBe(200);
      const reader = await login('reader', 'reader-pass-2');
      expect(reader.statusCode, reader.body).toBe(200);
      expect((await login('admin', 'not-the-password')).statusCode).toBe(400);
      await daemon.app.listen({ port: 0, host: '127.0.0.1' });
      const address = daemon.app.server.address();
      const device = koboDevice(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`, KOBO_TOKEN);
      const grimmoryToken = `BOOKLORE.${Buffer.from(JSON.stringify({ lastSuccessfulSyncPointId: '3f1c9a8e-0d1b-4c6e-9a57-5b1f1e2d3c4b' })).toString('base64').replace(/=+$/, '')}`;
      // The device's last token from Grimmory names the imported snapshot: the book it holds is not new to it, and keeps its cover id.
      const resumed = await device.call('GET', '/v1/library/sync', { syncToken: grimmoryToken });
      expect(resumed.status).toBe(200);
      const items = resumed.json() as Record<string, { BookMetadata?: { EntitlementId: string; CoverImageId: string } }>[];
      expect(items.filter((item) => 'NewEntitlement' in item)).toEqual([]);
      expect(items.find((item) => 'ChangedProductMetadata' in item)?.ChangedProductMetadata?.BookMetadata).toMatchObject({ EntitlementId: '10', CoverImageId: 'BL-ABCDEFGHIJKLM' });
      const state = await device.call('GET', '/v1/library/10/state');
      expect(state.status).toBe(200);
      expect(state.json()).toEqual([expect.objectContaining({ EntitlementId: '10', StatusInfo: { Status: 'Reading' }, Statistics: { SpentReadingMinutes: 60 } })]);
    } finally {
      await daemon.close();
    }
  });

  it('names a dump file that is not there and a server that does not answer', async () => {
    const dataDir = tmp.file('errors');
    const missing = await runCli(['--data-dir', dataDir, '--json', 'import', 'grimmory', '--from-dump', tmp.file('nope.sql')]);
    expect(missing.code).toBe(3);
    expect(JSON.parse(missing.stdout).error.code).toBe('PATH_NOT_FOUND');
    const gzipped = tmp.file('grimmory.sql.gz');
    writeFileSync(gzipped, gzipSync('CREATE TABLE `x` (`id` int);\n'));
    const compressed = await runCli(['--data-dir', dataDir, '--json', 'import', 'grimmory', '--from-dump', gzipped]);
    expect(compressed.code).toBe(1);
    expect(JSON.parse(compressed.stdout).error).toMatchObject({ code: 'SOURCE_INVALID', message: expect.stringContaining('gzip-compressed') });
    const closed = await runCli(['--data-dir', dataDir, '--json', 'import', 'grimmory', '--from', 'mysql://root@127.0.0.1:1/grimmory']);
    expect(closed.code).toBe(1);
    expect(JSON.parse(closed.stdout).error).toMatchObject({ code: 'SOURCE_UNREACHABLE', message: expect.stringContaining('cannot connect to mysql://root@127.0.0.1:1/grimmory') });
    const both = await runCli(['--data-dir', dataDir, '--json', 'import', 'grimmory']);
    expect(both.code).toBe(2);
  });

  it('refuses a schema it does not know, naming its version', async () => {
    const c = await server.connect('grimmory');
    await c.query("insert into flyway_schema_history (installed_rank, version, description, type, script, installed_by, execution_time, success) values (4, '145', 'Add author sort name', 'SQL', 'V145.sql', 'grimmory', 1, 1)");
    await c.end();
    const dataDir = tmp.file('newer');
    const result = await runCli(importArgs(dataDir, '--from', url));
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout).error).toEqual({ code: 'UNSUPPORTED_SCHEMA', message: expect.stringContaining('version 145') });
    expect(await readRows(join(dataDir, 'bindery.sqlite'), 'select count(*) as n from users')).toEqual([{ n: 0 }]);
  });
});

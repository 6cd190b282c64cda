// IconController over HTTP with real files under the data directory: saving (single and batch), names, paging, the
// content and the map of all icons, deletion; and hostile SVGs: refused, or served with every attack gone.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InjectOptions } from 'fastify';
import { sanitizeSvg } from '../../src/core/icons/svg-sanitize.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';

let d: TestDaemon;
let manager: string;
let viewer: string;
let iconDir: string;

const call = (token: string, options: InjectOptions) => d.inject({ ...options, headers: { ...(options.headers ?? {}), authorization: `Bearer ${token}` } });
const post = (token: string, svgName: string, svgData: string) => call(token, { method: 'POST', url: '/api/v1/icons', payload: { svgName, svgData } });
const content = (token: string, name: string) => call(token, { method: 'GET', url: `/api/v1/icons/${name}/content` });

const BOOK = '<svg xmlns="http://www.w3.org/2000/svg" width="24" height="24" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2"><path d="M4 19.5v-15A2.5 2.5 0 0 1 6.5 2H20v20H6.5a2.5 2.5 0 0 1 0-5H20"/></svg>';

beforeAll(async () => {
  d = await startTestDaemon();
  manager = (await d.createUser('iconist', { canManageIcons: true })).token;
  viewer = (await d.createUser('viewer')).token;
  iconDir = join(d.config.dataDir, 'icons', 'svg');
});

afterAll(async () => {
  await d?.close();
});

describe('saving and serving an icon', () => {
  it('stores a clean icon under the data directory and serves it as image/svg+xml under a locked-down CSP', async () => {
    const res = await post(manager, 'book-open', BOOK);
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('');
    expect(existsSync(join(iconDir, 'book-open.svg'))).toBe(true);
    const served = await content(viewer, 'book-open');
    expect(served.statusCode).toBe(200);
    expect(served.headers['content-type']).toMatch(/^image\/svg\+xml/);
    expect(served.headers['content-security-policy']).toContain("default-src 'none'");
    expect(served.headers['content-security-policy']).toContain('sandbox');
    expect(served.headers['x-content-type-options']).toBe('nosniff');
    expect(served.body).toBe(BOOK);
    // The stored name may be asked for with its extension too.
    expect((await content(viewer, 'book-open.svg')).body).toBe(BOOK);
  });

  it('refuses a name that is taken (409 ICON_ALREADY_EXISTS) and keeps the first icon', async () => {
    await post(manager, 'taken', BOOK);
    const res = await post(manager, 'taken', '<svg xmlns="http://www.w3.org/2000/svg"><circle r="1"/></svg>');
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ status: 409, message: "SVG icon with name 'taken' already exists" });
    expect((await content(viewer, 'taken')).body).toBe(BOOK);
  });

  it('refuses names with path characters or anything but letters, digits and dashes', async () => {
    for (const svgName of ['../evil', 'a/b', 'dot.svg', 'with space', '', 'x'.repeat(256)]) {
      const res = await post(manager, svgName, BOOK);
      expect(res.statusCode, svgName).toBe(400);
      expect(res.json()).toMatchObject({ status: 400, message: 'Validation error' });
    }
    expect(readdirSync(iconDir).filter((f) => !/^[a-zA-Z0-9-]+\.svg$/.test(f))).toEqual([]);
    // A file outside the icon folder that a name climbing out of it would reach (whatever the catalog engine).
    const outside = join(d.config.dataDir, 'outside.svg');
    writeFileSync(outside, BOOK);
    for (const name of ['..%2F..%2Foutside', '..%2F..%2Foutside.svg', '.hidden', 'a%00b', '%2Fetc%2Fpasswd']) {
      const res = await content(viewer, name);
      expect(res.statusCode, name).toBe(400);
      expect((await call(manager, { method: 'DELETE', url: `/api/v1/icons/${name}` })).statusCode, name).toBe(400);
    }
    expect(readFileSync(outside, 'utf8')).toBe(BOOK);
  });

  it('answers 404 for an icon that does not exist', async () => {
    const res = await content(viewer, 'nothing-here');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ status: 404, message: 'File not found: SVG icon not found: nothing-here' });
  });

  it('refuses what is not an SVG, as Grimmory words it', async () => {
    const cases: [string, string][] = [
      ['<html><body/></html>', 'Invalid SVG format: must start with <svg or <?xml'],
      ['<svg><path d="M0 0"/>', 'Invalid SVG format: missing closing </svg> tag'],
      ['<svg><g></svg>', 'Invalid SVG format:'],
      ['<?xml version="1.0"?><html><svg></svg></html>', 'Invalid SVG format: the root element must be <svg>'],
    ];
    for (const [svgData, message] of cases) {
      const res = await post(manager, 'not-svg', svgData);
      expect(res.statusCode, svgData).toBe(400);
      expect((res.json() as { message: string }).message.startsWith(message)).toBe(true);
    }
    expect(existsSync(join(iconDir, 'not-svg.svg'))).toBe(false);
  });

  it('refuses an SVG over the 1 MiB limit', async () => {
    const big = `<svg xmlns="http://www.w3.org/2000/svg">${'<path d="M0 0"/>'.repeat(70_000)}</svg>`;
    expect(big.length).toBeGreaterThan(1_048_576);
    const res = await post(manager, 'too-big', big);
    expect(res.statusCode).toBe(400);
    expect(existsSync(join(iconDir, 'too-big.svg'))).toBe(false);
  });
});

describe('hostile SVGs', () => {
  it('refuses DOCTYPEs and entity declarations (entity expansion bombs never reach a parser)', async () => {
    const laughs = '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><svg xmlns="http://www.w3.org/2000/svg"><text>&b;</text></svg>';
    const external = '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><svg><text>&xxe;</text></svg>';
    for (const svgData of [laughs, external]) {
      const res = await post(manager, 'entities', svgData);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ message: 'Invalid SVG format: DOCTYPE and entity declarations are not allowed' });
    }
    const undefinedEntity = await post(manager, 'entities', '<svg><text>&nbsp;</text></svg>');
    expect(undefinedEntity.statusCode).toBe(400);
    expect(existsSync(join(iconDir, 'entities.svg'))).toBe(false);
  });

  // Each attack, and what must not be left of it in what is served.
  const attacks: [string, string, RegExp][] = [
    ['a script element', '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.cookie)</script><circle r="4"/></svg>', /<script|alert/i],
    ['a namespaced script', '<svg xmlns="http://www.w3.org/2000/svg" xmlns:h="http://www.w3.org/1999/xhtml"><h:script>alert(1)</h:script></svg>', /script|alert/i],
    ['event handlers', '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><rect width="2" height="2" onclick="alert(2)" ONMOUSEOVER="alert(3)"/></svg>', /on(load|click|mouseover)|alert/i],
    ['a foreignObject with HTML', '<svg xmlns="http://www.w3.org/2000/svg"><foreignObject width="9" height="9"><div xmlns="http://www.w3.org/1999/xhtml"><img src="x" onerror="alert(1)"/></div></foreignObject></svg>', /foreignObject|<div|<img|onerror/i],
    ['a javascript: link', '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><a xlink:href="javascript:alert(1)"><circle r="4"/></a></svg>', /javascript|<a[ >]|xlink/i],
    ['external references', '<svg xmlns="http://www.w3.org/2000/svg"><use href="https://evil.example/sprite.svg#x"/><image href="http://evil.example/track.png" width="1" height="1"/><rect fill="url(http://evil.example/p.svg#g)" width="1" height="1"/></svg>', /evil\.example/],
    ['style sheets that load', '<svg xmlns="http://www.w3.org/2000/svg"><style>@import url(https://evil.example/x.css);</style><rect style="fill:url(https://evil.example/a)" width="1"/><rect style="width:expression(alert(1))" height="1"/></svg>', /evil\.example|@import|expression/],
    ['animations that rewrite links', '<svg xmlns="http://www.w3.org/2000/svg"><a href="#x"><set attributeName="href" to="javascript:alert(1)"/><animate attributeName="href" values="javascript:alert(1)"/><text>x</text></a></svg>', /javascript|<set|<animate/i],
    ['a stylesheet processing instruction', '<?xml version="1.0"?><?xml-stylesheet href="https://evil.example/s.css" type="text/css"?><svg xmlns="http://www.w3.org/2000/svg"><circle r="1"/></svg>', /xml-stylesheet|evil\.example/],
    ['xml:base and foreign namespaces', '<svg xmlns="http://www.w3.org/2000/svg" xml:base="https://evil.example/" xmlns:ev="http://www.w3.org/2001/xml-events"><g ev:event="click"/></svg>', /xml:base|evil\.example|ev:event|xml-events/],
    ['markup hidden in character data', '<svg xmlns="http://www.w3.org/2000/svg"><text><![CDATA[<script>alert(1)</script>]]></text></svg>', /<script/],
    ['an embedded SVG document as an image', '<svg xmlns="http://www.w3.org/2000/svg"><image href="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9ImFsZXJ0KDEpIi8+"/></svg>', /data:image\/svg|<image/],
  ];

  it.each(attacks)('neutralises %s: stored and served without it', async (_what, svgData, left) => {
    const name = `attack-${attacks.findIndex((a) => a[0] === _what)}`;
    const res = await post(manager, name, svgData);
    expect(res.statusCode).toBe(200);
    const served = (await content(viewer, name)).body;
    expect(served.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(served).not.toMatch(left);
    expect(readFileSync(join(iconDir, `${name}.svg`), 'utf8')).toBe(served);
    const all = (await call(viewer, { method: 'GET', url: '/api/v1/icons/all/content' })).json() as Record<string, string>;
    expect(all[name]).toBe(served);
  });

  it('keeps what icons need: fragment references, gradients, inline styles, embedded rasters, text', async () => {
    const svg =
      '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 10 10"><defs><linearGradient id="g"><stop offset="0" stop-color="#f00"/></linearGradient><symbol id="s"><circle r="2"/></symbol></defs>' +
      '<use xlink:href="#s"/><rect fill="url(#g)" style="opacity:0.5" width="4" height="4"/><image href="data:image/png;base64,iVBORw0KGgo=" width="1" height="1"/><text x="1">A &amp; B</text></svg>';
    expect((await post(manager, 'keeper', svg)).statusCode).toBe(200);
    const served = (await content(viewer, 'keeper')).body;
    expect(served).toBe(
      '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><defs><linearGradient id="g"><stop offset="0" stop-color="#f00"/></linearGradient><symbol id="s"><circle r="2"/></symbol></defs>' +
        '<use href="#s"/><rect fill="url(#g)" style="opacity:0.5" width="4" height="4"/><image href="data:image/png;base64,iVBORw0KGgo=" width="1" height="1"/><text x="1">A &amp; B</text></svg>',
    );
    expect(sanitizeSvg(served)).toBe(served);
  });

  it('sanitizes an icon put into the folder by hand before serving it', async () => {
    mkdirSync(iconDir, { recursive: true });
    writeFileSync(join(iconDir, 'by-hand.svg'), '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script><path d="M1 1"/></svg>');
    writeFileSync(join(iconDir, 'broken.svg'), '<svg><g></svg>');
    const served = await content(viewer, 'by-hand');
    expect(served.body).toBe('<svg xmlns="http://www.w3.org/2000/svg"><path d="M1 1"/></svg>');
    expect((await content(viewer, 'broken')).statusCode).toBe(404);
    const all = (await call(viewer, { method: 'GET', url: '/api/v1/icons/all/content' })).json() as Record<string, string>;
    expect(all['by-hand']).toBe(served.body);
    expect(all).not.toHaveProperty('broken');
  });
});

describe('batch', () => {
  it('saves each icon on its own and reports per icon', async () => {
    await post(manager, 'batch-old', BOOK);
    const res = await call(manager, {
      method: 'POST',
      url: '/api/v1/icons/batch',
      payload: { icons: [{ svgName: 'batch-one', svgData: BOOK }, { svgName: 'batch-old', svgData: BOOK }, { svgName: 'batch-bad', svgData: '<div/>' }, { svgName: 'batch-two', svgData: '<svg onload="x()"><circle r="1"/></svg>' }] },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      totalRequested: 4,
      successCount: 2,
      failureCount: 2,
      results: [
        { iconName: 'batch-one', success: true },
        { iconName: 'batch-old', success: false, errorMessage: "SVG icon with name 'batch-old' already exists" },
        { iconName: 'batch-bad', success: false, errorMessage: 'Invalid SVG format: must start with <svg or <?xml' },
        { iconName: 'batch-two', success: true },
      ],
    });
    expect((await content(viewer, 'batch-two')).body).toBe('<svg xmlns="http://www.w3.org/2000/svg"><circle r="1"/></svg>');
  });

  it('refuses a batch larger than its body limit with 413 in the error shape, storing nothing', async () => {
    // The audit's 1,000 icons of 60 KB (60 MB): memory for a request is bounded by the limit, not by the client.
    const svg = `<svg xmlns="http://www.w3.org/2000/svg"><path d="${'M1 1 '.repeat(12_000)}"/></svg>`;
    const icons = Array.from({ length: 1000 }, (_, i) => ({ svgName: `bulk-${i}`, svgData: svg }));
    const res = await call(manager, { method: 'POST', url: '/api/v1/icons/batch', payload: { icons } });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ status: 413, message: expect.stringMatching(/too large/i), timestamp: expect.any(String) });
    expect(existsSync(join(iconDir, 'bulk-0.svg'))).toBe(false);
  });

  it('refuses the whole batch when a name breaks the pattern or the list is empty', async () => {
    for (const icons of [[], [{ svgName: 'fine', svgData: BOOK }, { svgName: '../nope', svgData: BOOK }]]) {
      const res = await call(manager, { method: 'POST', url: '/api/v1/icons/batch', payload: { icons } });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ message: 'Validation error' });
    }
    expect(existsSync(join(iconDir, 'fine.svg'))).toBe(false);
  });
});

describe('names, pages and deletion', () => {
  it('pages the names in order, as a Spring Page', async () => {
    const all = (await call(viewer, { method: 'GET', url: '/api/v1/icons?page=0&size=1000' })).json() as { content: string[]; page: { totalElements: number } };
    expect(all.content).toEqual([...all.content].sort());
    expect(all.content).toContain('book-open');
    const second = await call(viewer, { method: 'GET', url: '/api/v1/icons?page=1&size=2' });
    expect(second.statusCode).toBe(200);
    expect(second.json()).toEqual({ content: all.content.slice(2, 4), page: { size: 2, number: 1, totalElements: all.page.totalElements, totalPages: Math.ceil(all.page.totalElements / 2) } });
    expect((await call(viewer, { method: 'GET', url: '/api/v1/icons?page=999' })).json()).toMatchObject({ content: [] });
    const negative = await call(viewer, { method: 'GET', url: '/api/v1/icons?page=-1' });
    expect(negative.statusCode).toBe(400);
    expect(negative.json()).toMatchObject({ message: 'Page index must not be less than zero' });
    expect((await call(viewer, { method: 'GET', url: '/api/v1/icons?size=0' })).json()).toMatchObject({ message: 'Page size must not be less than one' });
  });

  it('deletes an icon (200) for managers only; a missing one is 404', async () => {
    await post(manager, 'doomed', BOOK);
    expect((await call(viewer, { method: 'DELETE', url: '/api/v1/icons/doomed' })).statusCode).toBe(403);
    const res = await call(manager, { method: 'DELETE', url: '/api/v1/icons/doomed' });
    expect(res.statusCode).toBe(200);
    expect(existsSync(join(iconDir, 'doomed.svg'))).toBe(false);
    expect((await content(viewer, 'doomed')).statusCode).toBe(404);
    expect((await call(manager, { method: 'DELETE', url: '/api/v1/icons/doomed' })).statusCode).toBe(404);
  });

  it('lets only icon managers and administrators save', async () => {
    const res = await post(viewer, 'sneaky', BOOK);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ message: 'Access denied.' });
    expect(existsSync(join(iconDir, 'sneaky.svg'))).toBe(false);
  });
});

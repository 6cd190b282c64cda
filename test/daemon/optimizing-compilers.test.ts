// bin/bindery starts `serve` with V8's optimizing compilers off; the daemon switches them on (src/daemon/optimizing-compilers.ts).
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isApiWork, optimizeFromNowOn } from '../../src/daemon/optimizing-compilers.ts';

const MODULE = join(import.meta.dirname, '..', '..', 'src', 'daemon', 'optimizing-compilers.ts');

/** Runs a hot function before and after the switch in a process started as bin/bindery starts `serve`; V8's trace of what it optimized. */
function optimizedAround(flags: string[]): { before: string; after: string; switched: string } {
  const script = `
    const { optimizeFromNowOn } = await import(${JSON.stringify(MODULE)});
    const hot = (a) => { let s = 0; for (let i = 0; i < 50; i++) s += (a * i) % 7; return s; };
    let total = 0;
    for (let i = 0; i < 300000; i++) total += hot(i);
    console.log('--switch ' + JSON.stringify(optimizeFromNowOn()) + ' ' + JSON.stringify(optimizeFromNowOn()));
    for (let i = 0; i < 300000; i++) total += hot(i);
    console.log('--end ' + total);`;
  const out = execFileSync(process.execPath, [...flags, '--trace-opt', '--input-type=module', '-e', script], { encoding: 'utf8' });
  const [before = '', rest = ''] = out.split('--switch ');
  const [switched = '', after = ''] = rest.split('\n--end')[0]?.split(/\n(.*)/s) ?? [];
  return { before, after, switched };
}

describe('optimizeFromNowOn', () => {
  it('switches on the compilers bin/bindery switched off, once: hot code is optimized only from then on', () => {
    const { before, after, switched } = optimizedAround(['--no-maglev', '--no-turbofan']);
    expect(before).not.toMatch(/completed compiling .*MAGLEV|completed compiling .*TURBOFAN/);
    expect(switched).toBe('["--maglev","--invocation-count-for-turbofan=10000","--turbofan"] []');
    expect(after).toMatch(/completed compiling .*(MAGLEV|TURBOFAN)/);
  });

  it('does nothing in a process started without the flags', () => {
    expect(optimizeFromNowOn(['--max-semi-space-size=8'])).toEqual([]);
  });
});

describe('isApiWork', () => {
  it('is a request of the API, not a health check nor a static file of the web UI', () => {
    for (const url of ['/api/v1/auth/login', '/api/kobo/abc/v1/library/sync', '/komga/api/v1/books?page=2', '/bindery/api/v1/opds/catalog?page=1', '/api/koreader/syncs/progress']) expect(isApiWork(url), url).toBe(true);
    for (const url of ['/api/v1/healthcheck', '/api/koreader/healthcheck', '/bindery/api/v1/healthcheck?x=1', '/', '/index.html', '/assets/main.js', '/books/12?from=/api/x', undefined]) expect(isApiWork(url), String(url)).toBe(false);
  });
});

describe('optimizeOnFirstApiRequest', () => {
  it('switches the compilers on with the first request of the API, not with health checks or static files', async () => {
    const script = `
      const { createServer } = await import('node:http');
      const { optimizeOnFirstApiRequest } = await import(${JSON.stringify(MODULE)});
      const server = createServer((req, res) => res.end('ok'));
      optimizeOnFirstApiRequest(server);
      await new Promise((r) => server.listen(0, '127.0.0.1', r));
      const url = 'http://127.0.0.1:' + server.address().port;
      const hot = (a) => { let s = 0; for (let i = 0; i < 50; i++) s += (a * i) % 7; return s; };
      const heat = () => { let t = 0; for (let i = 0; i < 300000; i++) t += hot(i); return t; };
      for (let i = 0; i < 5; i++) await (await fetch(url + '/api/v1/healthcheck')).text();
      await (await fetch(url + '/api/koreader/healthcheck')).text();
      await (await fetch(url + '/')).text();
      await (await fetch(url + '/assets/app.js')).text();
      heat();
      console.log('--first-api-request');
      await (await fetch(url + '/api/v1/auth/login')).text();
      heat();
      server.close();`;
    const out = execFileSync(process.execPath, ['--no-maglev', '--no-turbofan', '--trace-opt', '--input-type=module', '-e', script], { encoding: 'utf8' });
    const [before = '', after = ''] = out.split('--first-api-request');
    expect(before).not.toMatch(/completed compiling .*(MAGLEV|TURBOFAN)/);
    expect(after).toMatch(/completed compiling .*(MAGLEV|TURBOFAN)/);
  });
});

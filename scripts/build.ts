// Bundles the command line and the scan worker into node_modules/.cache/bindery/ so `bindery serve` starts from a
// few large files instead of ~1,500 small ones (ESM loading, not work, was most of its start-up time and memory).
// bin/bindery runs the bundle when it is newer than src/, package.json and the installed packages, else the sources.
// Run by scripts/setup; `node scripts/build.ts --check` exits 0 when the bundle is up to date.
// The bundler is rolldown (installed with vitest/vite); without it the build is skipped and the sources are used.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Plugin, rolldown as RolldownFn } from 'rolldown';

type Rolldown = typeof RolldownFn;

const ROOT = resolve(import.meta.dirname, '..');
export const BUNDLE_DIR = join(ROOT, 'node_modules', '.cache', 'bindery');
const STAMP = '.built';
const ENTRY = join(ROOT, 'src', 'cli.ts');
/** Worker-thread entries the sources name as `new URL('./worker.ts', import.meta.url)` (scan, password pool, Store.readAside); each becomes a hashed chunk. */
const WORKERS = [
  join(ROOT, 'src', 'core', 'scan', 'worker.ts'),
  join(ROOT, 'src', 'core', 'auth', 'password-worker.ts'),
  join(ROOT, 'src', 'core', 'store', 'read-aside-worker.ts'),
];
/** Inputs whose change makes the bundle stale (bin/bindery checks the same list). */
const INPUTS = [join(ROOT, 'src'), join(ROOT, 'package.json'), join(ROOT, 'package-lock.json'), join(ROOT, 'node_modules', '.package-lock.json')];

/**
 * Left as imports, loaded from node_modules at run time: native addons; packages that start worker threads from
 * files in their own folder or read their own assets; big ones only some commands load. (pino and thread-stream
 * find their worker files through `__dirname`, which the bundle keeps pointing at their own folders, and bundling
 * them saves ~5 MB of the daemon's memory; pino-pretty is loaded by name inside the log worker.) cron and luxon: cron
 * requires luxon's CommonJS build, and src/core/tasks/local-cron.ts must configure that same instance (bundled, cron
 * would get a copy of its own).
 */
const EXTERNAL = [
  'better-sqlite3', 'sharp', '@napi-rs/canvas', 'fsevents',
  'piscina', 'pino-pretty',
  '@fastify/swagger', '@fastify/swagger-ui',
  'pdfjs-dist', 'node-unrar-js', '7zip-bin', '@ffmpeg-installer/ffmpeg',
  'ink', 'react', 'nodemailer', 'pg',
  'cron', 'luxon',
];
const isExternal = (id: string): boolean => EXTERNAL.some((name) => id === name || id.startsWith(`${name}/`));

function newestInput(path: string): number {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestInput(join(path, entry)));
  return newest;
}

export function bundleIsFresh(): boolean {
  const stamp = join(BUNDLE_DIR, STAMP);
  if (!existsSync(stamp) || !existsSync(join(BUNDLE_DIR, 'cli.mjs'))) return false;
  const built = statSync(stamp).mtimeMs;
  return INPUTS.every((input) => newestInput(input) <= built);
}

/** A JS expression for the URL of `file` as the bundled code runs from `outDir` (so the bundle stays relocatable). */
function urlOf(outDir: string, file: string): string {
  return `new URL(${JSON.stringify(relative(outDir, file).split(sep).join('/'))}, import.meta.url)`;
}

/**
 * Every bundled module keeps seeing its own location: `import.meta.url`/`dirname`/`filename` and CommonJS
 * `__dirname`/`__filename` are rewritten to the original file's. Paths such as `new URL('../package.json',
 * import.meta.url)` and packages reading their own files keep working. A `new URL('./x.ts', import.meta.url)`
 * naming another entry (the scan worker) points at that entry's bundled twin instead.
 */
function ownLocation(outDir: string): Plugin {
  const at = (file: string): string => urlOf(outDir, file);
  return {
    name: 'bindery-own-location',
    transform(code, id) {
      if (!id.startsWith('/') || id.includes('\0')) return null;
      const usesMeta = code.includes('import.meta');
      const usesCjsPaths = /\b__(dirname|filename)\b/.test(code) && !/\b(const|let|var)\s+__(dirname|filename)\b/.test(code);
      if (!usesMeta && !usesCjsPaths) return null;
      let out = code;
      if (usesMeta) {
        out = out.replace(/new URL\((['"])(\.{1,2}\/[^'"]+)\1,\s*import\.meta\.url\)/g, (whole, _q: string, target: string) => {
          const file = resolve(dirname(id), target);
          if (!WORKERS.includes(file)) return whole;
          // A content-hashed name: a daemon started from an older bundle keeps starting its own workers.
          return `new URL(import.meta.ROLLUP_FILE_URL_${this.emitFile({ type: 'chunk', id: file })})`;
        });
        out = out
          .replace(/\bimport\.meta\.url\b/g, `${at(id)}.href`)
          .replace(/\bimport\.meta\.filename\b/g, `__bindery_fileURLToPath(${at(id)})`)
          .replace(/\bimport\.meta\.dirname\b/g, `__bindery_fileURLToPath(${at(dirname(id) + '/')}).replace(/\\/$/, '')`);
      }
      if (usesCjsPaths) {
        out = `var __filename = __bindery_fileURLToPath(${at(id)}), __dirname = __bindery_fileURLToPath(${at(dirname(id) + '/')}).replace(/\\/$/, '');\n${out}`;
      }
      return { code: out, map: null };
    },
  };
}

/**
 * Node modules a package requires at load time but uses only in a configuration Bindery never has, turned into a
 * require at first use: fastify's server module loads `node:https` (and with it `node:tls`) and `node:http2` for
 * servers with TLS or HTTP/2, which `bindery serve` never makes (TLS ends at a reverse proxy): ~3 MB of the idle
 * daemon's memory.
 */
const LAZY_REQUIRES: { file: string; module: string; used: string[] }[] = [
  { file: 'fastify/lib/server.js', module: 'node:https', used: ['createServer'] },
  { file: 'fastify/lib/server.js', module: 'node:http2', used: ['createServer', 'createSecureServer'] },
];

function lazyRequires(): Plugin {
  return {
    name: 'bindery-lazy-requires',
    transform(code, id) {
      const wanted = LAZY_REQUIRES.filter((lazy) => id.endsWith(`/node_modules/${lazy.file}`));
      if (wanted.length === 0) return null;
      let out = code;
      for (const { file, module, used } of wanted) {
        const declaration = new RegExp(`^const (\\w+) = require\\('${module}'\\)$`, 'm');
        const name = declaration.exec(out)?.[1];
        const codeLines = out.split('\n').filter((line) => !/^\s*(\/\/|\/?\*)/.test(line)).join('\n');
        const members = name ? [...codeLines.matchAll(new RegExp(`\\b${name}\\.(\\w+)`, 'g'))].map((m) => m[1] as string) : [];
        if (!name || members.some((member) => !used.includes(member))) {
          console.error(`build: warning: ${file} no longer uses ${module} as expected; it stays loaded at start`);
          continue;
        }
        const getters = used.map((fn) => `get ${fn} () { return require('${module}').${fn} }`).join(', ');
        out = out.replace(declaration, `const ${name} = { ${getters} }`);
      }
      return { code: out, map: null };
    },
  };
}

/** `--stats`: the biggest chunks and, in each, the packages and files that make it up. */
function printStats(output: readonly { type: string; fileName: string; code?: string; modules?: Record<string, { renderedLength: number }> }[]): void {
  const chunks = output.filter((o) => o.type === 'chunk' && o.code !== undefined).sort((a, b) => (b.code?.length ?? 0) - (a.code?.length ?? 0));
  for (const chunk of chunks.slice(0, Number(process.env.STATS_TOP ?? 6))) {
    const byOrigin = new Map<string, number>();
    for (const [id, info] of Object.entries(chunk.modules ?? {})) {
      const origin = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(id)?.[1] ?? relative(ROOT, id);
      byOrigin.set(origin, (byOrigin.get(origin) ?? 0) + info.renderedLength);
    }
    const top = [...byOrigin].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([k, v]) => `${k} ${(v / 1024).toFixed(0)}k`);
    console.error(`${chunk.fileName} ${((chunk.code?.length ?? 0) / 1024).toFixed(0)} KB: ${top.join(', ')}`);
  }
}

/**
 * Bundles into `outDir` (default the one bin/bindery uses), replacing it only once the new bundle has answered
 * `--version`. Tests build their own copy elsewhere so they never swap the bundle under a running bindery.
 */
export async function build(outDir: string = BUNDLE_DIR, options: { quiet?: boolean } = {}): Promise<void> {
  let rolldown: Rolldown;
  try {
    ({ rolldown } = await import('rolldown'));
  } catch {
    if (outDir === BUNDLE_DIR) rmSync(BUNDLE_DIR, { recursive: true, force: true });
    throw new BuildUnavailable('rolldown is not installed');
  }
  const started = Date.now();
  const staging = `${outDir}.tmp-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  let bundled: string[];
  try {
    bundled = await bundleInto(rolldown, outDir, staging, started);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  const files = [...bundled];
  const bytes = files.reduce((sum, f) => sum + statSync(join(outDir, f)).size, 0);
  if (!options.quiet) console.error(`build: ${files.length} files, ${(bytes / 1048576).toFixed(1)} MB in ${((Date.now() - started) / 1000).toFixed(1)} s → ${relative(ROOT, outDir)}`);
}

async function bundleInto(rolldown: Rolldown, outDir: string, staging: string, started: number): Promise<string[]> {
  const bundle = await rolldown({
    input: { cli: ENTRY },
    platform: 'node',
    cwd: ROOT,
    external: (id) => isExternal(id),
    plugins: [ownLocation(outDir), lazyRequires()],
    logLevel: 'warn',
    onLog: (level, log) => {
      if (log.code === 'EVAL' || log.code === 'CIRCULAR_DEPENDENCY') return;
      console.error(`build: ${level}: ${log.message}`);
    },
  });
  const written = await bundle.write({
    dir: staging,
    format: 'esm',
    entryFileNames: '[name].mjs',
    chunkFileNames: '[name]-[hash].mjs',
    // The path helper the location rewrite uses, and a mark `bindery serve` logs (runtime: "bundle").
    banner: "import { fileURLToPath as __bindery_fileURLToPath } from 'node:url'; globalThis.__binderyBundle = true;",
    minify: true,
    // V8 keeps each module's source in memory, as two bytes per character once it holds one character above U+00FF
    // (a box-drawing glyph, an ellipsis in a message): escaped, the bundle loaded at start takes ~1.5 MB less.
    charset: 'ascii',
    // Comments are dropped, licence headers included: one "ä" in a kept header made V8 hold the whole 1.1 MB chunk as
    // two-byte text. The packages' licences stay in node_modules, where this bundle is built and used.
    comments: false,
    sourcemap: false,
  });
  for (const chunk of written.output) {
    if (chunk.type === 'chunk' && /[\u0080-\uffff]/.test(chunk.code)) console.error(`build: warning: ${chunk.fileName} is not ASCII; V8 will keep it as two-byte text`);
  }
  await bundle.close();
  if (process.argv.includes('--stats')) printStats(written.output);
  // The sources' own version check, against the bundle, before it replaces the previous one.
  const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  const reported = execFileSync(process.execPath, [join(staging, 'cli.mjs'), '--version'], { encoding: 'utf8', env: { ...process.env, BINDERY_COMPILE_CACHE: join(staging, '.no-cache') } }).trim();
  if (reported !== version) throw new Error(`the bundle reports version "${reported}", expected "${version}"`);
  rmSync(join(staging, '.no-cache'), { recursive: true, force: true });
  // Stamped with the time the build started: a source saved during the build leaves the bundle stale.
  writeFileSync(join(staging, STAMP), `${new Date(started).toISOString()}\n`);
  utimesSync(join(staging, STAMP), new Date(started), new Date(started));
  install(staging, outDir);
  return written.output.map((o) => o.fileName);
}

/**
 * Moves a finished build into `outDir` without pulling files from under a bindery already running from it: chunks
 * have content-hashed names, so they are added beside the old ones, and `cli.mjs` is replaced last, atomically.
 * Old chunks are deleted once no build has used them for a day (restart the daemon after upgrading).
 */
function install(staging: string, outDir: string): void {
  mkdirSync(outDir, { recursive: true });
  const fresh = new Set(readdirSync(staging));
  for (const file of fresh) if (file !== 'cli.mjs' && file !== STAMP) renameSync(join(staging, file), join(outDir, file));
  renameSync(join(staging, 'cli.mjs'), join(outDir, 'cli.mjs'));
  const stamp = statSync(join(staging, STAMP)).mtime;
  renameSync(join(staging, STAMP), join(outDir, STAMP));
  utimesSync(join(outDir, STAMP), stamp, stamp);
  const dayAgo = Date.now() - 24 * 3600_000;
  for (const file of readdirSync(outDir)) {
    if (fresh.has(file) || !file.endsWith('.mjs')) continue;
    const path = join(outDir, file);
    if (statSync(path).mtimeMs < dayAgo) rmSync(path, { force: true });
  }
}

export class BuildUnavailable extends Error {
  override name = 'BuildUnavailable';
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  if (process.argv.includes('--check')) process.exit(bundleIsFresh() ? 0 : 1);
  if (process.argv.includes('--clean')) rmSync(BUNDLE_DIR, { recursive: true, force: true });
  else if (process.argv.includes('--if-stale') && bundleIsFresh()) console.error('build: bundle is up to date');
  else {
    try {
      await build();
    } catch (error) {
      if (!(error instanceof BuildUnavailable)) throw error;
      console.error('build: rolldown is not installed (dev dependencies skipped?); bindery will run from its sources');
    }
  }
}

// Runs the real `bindery serve` as a child process (for the daemon benchmark and the tests that need a real process):
// from the sources, from a bundle scripts/build.ts made, or however bin/bindery decides.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..');
export const BIN = join(ROOT, 'bin', 'bindery');

/** How to start the command line. */
export interface Launcher {
  name: string;
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

/** bin/bindery forced onto src/cli.ts. */
export const fromSource: Launcher = { name: 'source', command: BIN, args: [], env: { BINDERY_FROM_SOURCE: '1' } };
/** bin/bindery as installed: the bundle when it is up to date, else the sources. */
export const asInstalled: Launcher = { name: 'bin/bindery', command: BIN, args: [], env: {} };
/** The V8 flags bin/bindery starts `serve` with (unless NODE_OPTIONS sets its own); launchers that skip bin/bindery add them. */
export const SERVE_NODE_FLAGS = '--max-semi-space-size=8 --no-concurrent-recompilation --no-maglev --no-turbofan --no-allocation-site-pretenuring';
/** The environment bin/bindery, the systemd unit and the image give `serve` (unless already set). */
export const SERVE_ENV: NodeJS.ProcessEnv = { MALLOC_ARENA_MAX: '2' };

/** A bundle built into `dir` (see scripts/build.ts), run directly. */
export function fromBundle(dir: string): Launcher {
  return { name: 'bundle', command: process.execPath, args: [join(dir, 'cli.mjs')], env: {} };
}

/**
 * A bundle run with the V8 flags bin/bindery gives `serve`, on node's command line: NODE_OPTIONS refuses some of them
 * (`--no-concurrent-recompilation`).
 */
export function servingBundle(dir: string): Launcher {
  const bundle = fromBundle(dir);
  return { ...bundle, args: [...SERVE_NODE_FLAGS.split(' '), ...bundle.args] };
}

/** Keeps the machine's own config files out of the way. */
const ISOLATED_ENV = { BINDERY_CONFIG: '', XDG_CONFIG_HOME: '/nonexistent-bindery-config', BINDERY_ADMIN_USERNAME: '', BINDERY_ADMIN_PASSWORD: '' };

export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

/** Resident memory of a process in MB, from /proc (Linux). */
export function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

export interface MemoryFigures {
  /** Resident set: every page mapped in, shared or not. */
  rss: number;
  /** Proportional set: shared pages divided among the processes that map them. */
  pss: number;
  /** Unique set: pages only this process maps (private clean + private dirty), what stopping it gives back. */
  uss: number;
}

/** RSS, PSS and USS of a process in MB, from /proc/<pid>/smaps_rollup (Linux 4.14+). */
export function memoryMb(pid: number): MemoryFigures {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? Number.NaN);
  return { rss: kb('Rss') / 1024, pss: kb('Pss') / 1024, uss: (kb('Private_Clean') + kb('Private_Dirty')) / 1024 };
}

/** Peak resident memory (VmHWM) of a process in MB. */
export function peakRssMb(pid: number): number {
  const match = /VmHWM:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

/**
 * The fields of /proc/<pid>/stat after the command name (which may hold spaces and ends at the last ')'): index 1 is
 * the parent's pid, 11 and 12 utime and stime, 13 and 14 the CPU of ended children it waited for (clock ticks).
 */
export function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** CPU time (user + system) a process has used so far, in ms, from /proc/<pid>/stat (Linux). */
export function cpuMs(pid: number): number {
  const fields = statFields(pid);
  return ticksToMs(Number(fields[11]) + Number(fields[12]));
}

export function ticksToMs(ticks: number): number {
  return (ticks * 1000) / CLOCK_TICKS;
}

/** The processes `pid` started and has not yet waited for (from /proc/<pid>/task/<tid>/children: any thread may fork). */
export function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const list = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
      if (list) children.push(...list.split(' ').map(Number));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return children;
}

/** The process and every process below it (the workers of `serve --workers`, a database server's backends). */
export function processTree(pid: number): number[] {
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) {
    try {
      tree.push(...childrenOf(tree[i] as number));
    } catch {
      // ended meanwhile
    }
  }
  return tree;
}

/** A figure summed over a process tree, skipping processes that end while it is read. */
export function treeSum(pid: number, figure: (pid: number) => number): number {
  let sum = 0;
  for (const member of processTree(pid)) {
    try {
      sum += figure(member);
    } catch {
      // ended meanwhile
    }
  }
  return sum;
}
/** The last CPU time (ns) read of each thread of each process, so that a thread that ends is still counted. */
const lastThreadNs = new Map<number, Map<string, number>>();

/**
 * CPU time of every thread of a process so far, in ms, to the nanosecond: the sum of /proc/<pid>/task/<tid>/schedstat
 * (time on a CPU). `cpuMs` counts in 10 ms ticks, too coarse for requests that cost a fraction of a millisecond.
 * A thread that has ended (the daemon's read-aside worker after 30 s without work) counts with what it had used when
 * last read here, so the figure never goes back (what it used after that read is lost).
 */
export function preciseCpuMs(pid: number): number {
  let threads = lastThreadNs.get(pid);
  if (!threads) lastThreadNs.set(pid, (threads = new Map()));
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      threads.set(tid, Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  let ns = 0;
  for (const used of threads.values()) ns += used;
  return ns / 1e6;
}

/**
 * CPU time so far of the threads of a process whose name starts with `name`, in ms (schedstat, as `preciseCpuMs`).
 * V8's helper threads are `V8Worker`: in `bindery serve`, which compiles on its main thread, they run the garbage
 * collector's parallel and concurrent work.
 */
export function threadsCpuMs(pid: number, name: string): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      if (!readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').startsWith(name)) continue;
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return ns / 1e6;
}

/** USER_HZ: 100 on every Linux this runs on. */
const CLOCK_TICKS = 100;

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface DaemonProcess {
  child: ChildProcess;
  pid: number;
  port: number;
  /** `http://127.0.0.1:<port><basePath>` */
  url: string;
  /** From spawn to the first successful healthcheck. */
  startupMs: number;
  /** CPU time the process had used by then (all threads): start-up cost that a busy machine does not inflate. */
  startupCpuMs: number;
  stdout(): string;
  stderr(): string;
  exited: Promise<Exit>;
  /** Sends the signal and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<Exit>;
}

export interface StartOptions {
  dataDir: string;
  /** Extra `serve` flags (`--base-path`, `--web-root`). */
  args?: string[];
  env?: NodeJS.ProcessEnv;
  port?: number;
  basePath?: string;
  timeoutMs?: number;
}

function collect(child: ChildProcess): { stdout: () => string; stderr: () => string } {
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (err += d));
  return { stdout: () => out, stderr: () => err };
}

function exitOf(child: ChildProcess): Promise<Exit> {
  return new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) done({ code: child.exitCode, signal: child.signalCode });
    else child.once('exit', (code, signal) => done({ code, signal }));
  });
}

/** Starts `bindery serve` on 127.0.0.1 and resolves once its healthcheck answers 200. */
export async function startDaemon(launcher: Launcher, options: StartOptions): Promise<DaemonProcess> {
  const port = options.port ?? (await freePort());
  const basePath = options.basePath ?? '';
  const started = performance.now();
  const child = spawn(launcher.command, [...launcher.args, '--data-dir', options.dataDir, 'serve', '--host', '127.0.0.1', '--port', String(port), ...(options.args ?? [])], {
    env: { ...process.env, ...ISOLATED_ENV, ...launcher.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = collect(child);
  const exited = exitOf(child);
  let gone: Exit | undefined;
  void exited.then((e) => (gone = e));
  const url = `http://127.0.0.1:${port}${basePath}`;
  const deadline = started + (options.timeoutMs ?? 60_000);
  for (;;) {
    if (gone) throw new Error(`bindery serve exited (${gone.code ?? gone.signal}) before answering: ${output.stderr() || output.stdout()}`);
    if (performance.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`bindery serve did not answer within ${options.timeoutMs ?? 60_000} ms: ${output.stderr()}`);
    }
    try {
      const res = await fetch(`${url}/api/v1/healthcheck`, { signal: AbortSignal.timeout(2000) });
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  const startupMs = performance.now() - started;
  const startupCpuMs = preciseCpuMs(child.pid as number);
  return {
    child,
    pid: child.pid as number,
    port,
    url,
    startupMs,
    startupCpuMs,
    ...output,
    exited,
    stop: async (signal = 'SIGTERM') => {
      if (!gone) child.kill(signal);
      return exited;
    },
  };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs one `bindery` command to completion. */
export async function runCli(launcher: Launcher, args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const child = spawn(launcher.command, [...launcher.args, ...args], { env: { ...process.env, ...ISOLATED_ENV, ...launcher.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = collect(child);
  const { code } = await exitOf(child);
  return { code, stdout: output.stdout(), stderr: output.stderr() };
}

// Runs `bin/bindery` as its own process under GNU time (Debian's `time` package), as a user would run an import:
// wall time, CPU time (user + system) and peak RSS of that process alone.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

export const BINDERY = join(import.meta.dirname, '..', 'bin', 'bindery');

export interface TimedRun {
  code: number;
  stdout: string;
  stderr: string;
  wallS: number;
  cpuS: number;
  peakRssMb: number;
}

export function runTimed(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<TimedRun> {
  const dir = mkdtempSync(join(tmpdir(), 'bindery-timed-'));
  const out = join(dir, 'time');
  return new Promise((resolve, reject) => {
    execFile('/usr/bin/time', ['-o', out, '-f', '%e %U %S %M', BINDERY, ...args], { env: { ...process.env, BINDERY_CONFIG: '', ...env }, maxBuffer: 1 << 28 }, (error, stdout, stderr) => {
      try {
        const [wall, user, system, maxKb] = readFileSync(out, 'utf8').trim().split('\n').at(-1)?.split(' ').map(Number) ?? [];
        rmSync(dir, { recursive: true, force: true });
        resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr, wallS: wall ?? NaN, cpuS: (user ?? NaN) + (system ?? NaN), peakRssMb: (maxKb ?? NaN) / 1024 });
      } catch (readError) {
        reject(readError);
      }
    });
  });
}

export function row(name: string, run: TimedRun, extra = ''): string {
  return `${name.padEnd(34)} wall ${run.wallS.toFixed(1).padStart(6)} s  CPU ${run.cpuS.toFixed(1).padStart(6)} s  peak RSS ${run.peakRssMb.toFixed(0).padStart(4)} MB  exit ${run.code}${extra ? `  ${extra}` : ''}`;
}

export function load(): string {
  return loadavg().map((l) => l.toFixed(2)).join(' ');
}

// Runs the real `bin/bindery` as a child process, as a script or cron job would.
import { spawn } from 'node:child_process';
import { join } from 'node:path';

export const BIN = join(import.meta.dirname, '..', '..', 'bin', 'bindery');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** Text written to the command's standard input (closed after). */
  input?: string;
  /** Extra environment; BINDERY_CONFIG is cleared so no user config file leaks in. */
  env?: NodeJS.ProcessEnv;
  /** Run as this user and group (the test runs as root). */
  as?: { uid: number; gid: number };
}

export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(BIN, args, { env: { ...process.env, BINDERY_CONFIG: '', ...options.env }, ...options.as });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/** A `bindery` function bound to one data directory. */
export function cliFor(dataDir: () => string): (...args: string[]) => Promise<CliResult> {
  return (...args) => runCli(['--data-dir', dataDir(), ...args]);
}

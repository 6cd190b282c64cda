// A throwaway MariaDB server for one test file: a fresh data directory, loopback only on a free port, run as the
// current user, stopped and removed at the end. Needs Debian's mariadb-server (.ci/run installs it).
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import mysql from 'mysql2/promise';
import { freePort } from './free-port.ts';
import { makeTempDir, type TempDir } from './temp-dir.ts';

export interface MariaDb {
  port: number;
  socket: string;
  dir: TempDir;
  /** A connection to `database` (created on first use) as root. */
  connect(database?: string): Promise<mysql.Connection>;
  stop(): Promise<void>;
}

/** The server binary: on PATH, or where Debian puts it (/usr/sbin, not on every user's PATH). */
function serverBinary(): string | undefined {
  try {
    return execFileSync('sh', ['-c', 'command -v mariadbd || command -v mysqld || ls /usr/sbin/mariadbd /usr/sbin/mysqld 2>/dev/null'], { encoding: 'utf8' }).split('\n')[0]?.trim() || undefined;
  } catch {
    return undefined;
  }
}

export function mariadbAvailable(): boolean {
  return serverBinary() !== undefined;
}

export async function startMariaDb(): Promise<MariaDb> {
  const dir = makeTempDir('bindery-mariadb-');
  const data = dir.file('data');
  mkdirSync(data);
  execFileSync('mariadb-install-db', [`--datadir=${data}`, '--auth-root-authentication-method=normal', '--user=root', '--skip-test-db'], { stdio: 'ignore' });
  const port = await freePort();
  const socket = dir.file('sock');
  const server: ChildProcess = spawn(
    serverBinary() ?? 'mariadbd',
    [`--datadir=${data}`, `--socket=${socket}`, '--skip-networking=0', '--bind-address=127.0.0.1', `--port=${port}`, '--user=root', `--pid-file=${dir.file('pid')}`, '--skip-log-bin', '--innodb-buffer-pool-size=32M'],
    { stdio: 'ignore' },
  );
  let exited = false;
  server.once('exit', () => (exited = true));
  const connect = async (database?: string): Promise<mysql.Connection> => {
    const c = await mysql.createConnection({ host: '127.0.0.1', port, user: 'root', timezone: 'Z', dateStrings: true, multipleStatements: true });
    // Grimmory's JVM runs in UTC: its timestamps are UTC.
    await c.query("set time_zone = '+00:00'");
    if (database) {
      await c.query(`create database if not exists \`${database}\` character set utf8mb4`);
      await c.query(`use \`${database}\``);
    }
    return c;
  };
  for (let attempt = 0; ; attempt++) {
    if (exited) throw new Error('mariadbd exited during start-up');
    try {
      await (await connect()).end();
      break;
    } catch (error) {
      if (attempt > 300) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    port,
    socket,
    dir,
    connect,
    stop: async () => {
      if (!exited) {
        const done = new Promise((r) => server.once('exit', r));
        server.kill('SIGTERM');
        await done;
      }
      dir.remove();
    },
  };
}

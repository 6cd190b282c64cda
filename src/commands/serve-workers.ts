// `bindery serve --workers N`: this process supervises N workers that each run the whole server on the shared port
// (node:cluster hands connections out). It never opens the catalog itself. A worker that dies is started again (after
// a pause that grows while workers keep dying at once); SIGTERM/SIGINT stop every worker gracefully, then this process.
// Which worker runs the singleton jobs is settled by their leases, as between replicas on several machines.
import cluster, { type Worker } from 'node:cluster';
import { EXIT } from './exit-codes.ts';

const MIN_RESTART_MS = 500;
const MAX_RESTART_MS = 30_000;
/** A worker that ran this long was healthy: the pause before a restart starts small again. */
const HEALTHY_MS = 60_000;
const STOP_GRACE_MS = 35_000;

function say(message: string): void {
  process.stderr.write(`bindery: ${message}\n`);
}

export function superviseWorkers(count: number): Promise<number> {
  return new Promise((resolve) => {
    let stopping = false;
    let pause = MIN_RESTART_MS;
    const startedAt = new Map<Worker, number>();
    const slots = new Map<Worker, number>();

    const fork = (slot: number): void => {
      const base = process.env.BINDERY_INSTANCE_NAME?.trim();
      const worker = cluster.fork({ BINDERY_WORKER: String(slot), ...(base ? { BINDERY_INSTANCE_NAME: `${base}-w${slot}` } : {}) });
      startedAt.set(worker, Date.now());
      slots.set(worker, slot);
    };

    cluster.on('exit', (worker, code, signal) => {
      const slot = slots.get(worker) ?? 0;
      const ranMs = Date.now() - (startedAt.get(worker) ?? Date.now());
      startedAt.delete(worker);
      slots.delete(worker);
      if (stopping) {
        if (Object.keys(cluster.workers ?? {}).length === 0) resolve(EXIT.OK);
        return;
      }
      pause = ranMs >= HEALTHY_MS ? MIN_RESTART_MS : Math.min(MAX_RESTART_MS, pause * 2);
      say(`worker ${slot} (pid ${worker.process.pid}) ended (${signal ?? `exit code ${code}`}); starting it again in ${pause} ms`);
      setTimeout(() => {
        if (!stopping) fork(slot);
      }, pause);
    });

    const stop = (signal: NodeJS.Signals): void => {
      if (stopping) {
        for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL');
        resolve(EXIT.FAILURE);
        return;
      }
      stopping = true;
      say(`${signal}: stopping ${Object.keys(cluster.workers ?? {}).length} workers`);
      const workers = Object.values(cluster.workers ?? {});
      if (workers.length === 0) resolve(EXIT.OK);
      for (const worker of workers) worker?.process.kill('SIGTERM');
      setTimeout(() => {
        for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL');
      }, STOP_GRACE_MS).unref();
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    say(`starting ${count} workers (pid ${process.pid} supervises)`);
    for (let slot = 1; slot <= count; slot++) fork(slot);
  });
}

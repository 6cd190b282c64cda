// Work files and folders Bindery writes in folders other processes use too — partial uploads and copies in the bookdrop
// and library folders, cover staging folders in the data directory — carry a mark of the process writing them, so a
// process tidying such a folder removes only what a gone process left. With replicas on several machines sharing the
// data directory, a process id says nothing about a writer on another machine: the mark is the owner's liveness token
// on PostgreSQL (judged by store.liveness, so a live writer anywhere is seen alive) and its process id on SQLite, whose
// processes all run on one machine.
import { currentOwner, type Owner } from './process-owner.ts';
import type { Liveness } from './store/liveness.ts';

/** A mark in a name: a process id (SQLite, or names written before tokens) or a liveness token. */
export const WORK_MARK = '(?:\\d+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})';

/** The mark of a registered owner. */
export function markOf(owner: Owner): string {
  return owner.token ?? String(owner.pid);
}

/** This process's mark, registered first so that every process sharing the catalog sees it running. */
export async function workMark(liveness: Liveness): Promise<string> {
  return markOf((await liveness.register()).owner);
}

function ownerOf(mark: string): Partial<Owner> {
  if (!/^\d+$/.test(mark)) return { token: mark };
  const here = currentOwner();
  return { host: here.host, boot: here.boot, pid: Number(mark) };
}

export type MarkStatus = 'own' | 'running' | 'gone';

/**
 * Who wrote work marked so: this process (which alone knows whether it still needs it), another process that still
 * runs (on whichever machine), or one that has gone and will never finish it.
 */
export async function markStatus(liveness: Liveness, mark: string): Promise<MarkStatus> {
  const owner = ownerOf(mark);
  if (liveness.isThisProcess(owner)) return 'own';
  return (await liveness.alive(owner)) ? 'running' : 'gone';
}

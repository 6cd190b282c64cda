// This server process as the other replicas see it: a name for people (BINDERY_INSTANCE_NAME, else host:pid) and a
// token unique to this start (shared with the process's liveness, so its leases and its liveness use one connection).
import { currentOwner, processToken } from '../process-owner.ts';
import type { LeaseInstance } from '../store/leases.ts';

let instance: LeaseInstance | undefined;

export function instanceName(env: NodeJS.ProcessEnv, owner = currentOwner()): string {
  return env.BINDERY_INSTANCE_NAME?.trim() || `${owner.host}:${owner.pid}`;
}

export function currentInstance(env: NodeJS.ProcessEnv = process.env): LeaseInstance {
  if (!instance || instance.pid !== process.pid) {
    const owner = currentOwner();
    instance = { ...owner, name: instanceName(env, owner), token: processToken() };
  }
  return instance;
}

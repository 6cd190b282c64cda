// Grimmory keeps read statuses in an EnumMap, so they come out in ReadStatus declaration order.
import { READ_STATUSES } from '../reading/read-status.ts';

/** Position in ReadStatus order; a value outside the enum goes last. */
export function statusRank(status: string): number {
  const i = (READ_STATUSES as readonly string[]).indexOf(status);
  return i < 0 ? READ_STATUSES.length : i;
}

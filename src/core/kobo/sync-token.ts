// The sync token a device sends back on every /v1/library/sync call (x-kobo-synctoken): which snapshot a session is
// paging through, how far into it the device has come, which one the last finished session ended on, and the Kobo
// store's own token when forwarding.

/**
 * Where a session stands in its snapshot: the books of each phase go out in book id order, so the last id handed out
 * is the whole position. `added` and `changed` walk the snapshot's unsent rows (new to the device, then in a new
 * state), `removed` the previous snapshot's books the current one lacks; `done` means every book is out.
 */
export interface SyncPosition {
  phase: 'added' | 'changed' | 'removed' | 'done';
  afterBookId: number;
}

export const SESSION_START: SyncPosition = { phase: 'added', afterBookId: 0 };

const PHASE_LETTERS = { added: 'A', changed: 'C', removed: 'R', done: 'D' } as const;
const PHASE_OF_LETTER: Record<string, SyncPosition['phase']> = { A: 'added', C: 'changed', R: 'removed', D: 'done' };

export interface SyncToken {
  ongoingSyncPointId: string | null;
  lastSuccessfulSyncPointId: string | null;
  rawKoboSyncToken: string | null;
  /** Only while a session is ongoing; a token without it (Grimmory's, or an older Bindery's) starts at SESSION_START. */
  position?: SyncPosition;
}

const PREFIX = 'BOOKLORE.';

export function emptySyncToken(): SyncToken {
  return { ongoingSyncPointId: null, lastSuccessfulSyncPointId: null, rawKoboSyncToken: null };
}

const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/**
 * Grimmory's own tokens (`BOOKLORE.` + unpadded base64 of JSON) are read as such; anything else holding a dot is the
 * Kobo store's token; everything else (absent, garbage, another server's token) means "never synced".
 */
export function decodeSyncToken(header: string | undefined): SyncToken {
  if (!header) return emptySyncToken();
  const value = header.trim();
  if (value.startsWith(PREFIX)) {
    try {
      const parsed = JSON.parse(Buffer.from(value.slice(PREFIX.length), 'base64').toString('utf8')) as unknown;
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return emptySyncToken();
      const fields = parsed as Record<string, unknown>;
      const token: SyncToken = {
        ongoingSyncPointId: text(fields.ongoingSyncPointId),
        lastSuccessfulSyncPointId: text(fields.lastSuccessfulSyncPointId),
        rawKoboSyncToken: text(fields.rawKoboSyncToken),
      };
      const position = token.ongoingSyncPointId === null ? undefined : decodePosition(fields.position);
      if (position) token.position = position;
      return token;
    } catch {
      return emptySyncToken();
    }
  }
  if (value.includes('.')) return { ...emptySyncToken(), rawKoboSyncToken: value };
  return emptySyncToken();
}

/** `A1234`: the phase's letter and the last book id handed out in it. */
function decodePosition(value: unknown): SyncPosition | undefined {
  const m = typeof value === 'string' ? /^([ACRD])(\d{1,15})$/.exec(value) : null;
  const phase = m ? PHASE_OF_LETTER[m[1] as string] : undefined;
  return m && phase ? { phase, afterBookId: Number(m[2]) } : undefined;
}

/** The position is written only into an ongoing session's token: a finished session's token is exactly Grimmory's. */
export function encodeSyncToken(token: SyncToken): string {
  const fields: Record<string, string | null> = { ongoingSyncPointId: token.ongoingSyncPointId, lastSuccessfulSyncPointId: token.lastSuccessfulSyncPointId, rawKoboSyncToken: token.rawKoboSyncToken };
  if (token.ongoingSyncPointId !== null && token.position) fields.position = `${PHASE_LETTERS[token.position.phase]}${token.position.afterBookId}`;
  const json = JSON.stringify(fields);
  return PREFIX + Buffer.from(json, 'utf8').toString('base64').replace(/=+$/, '');
}

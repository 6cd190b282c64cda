// The sync token a device sends back on every /v1/library/sync call (x-kobo-synctoken): which snapshot a session is
// paging through, which one the last finished session ended on, and the Kobo store's own token when forwarding.

export interface SyncToken {
  ongoingSyncPointId: string | null;
  lastSuccessfulSyncPointId: string | null;
  rawKoboSyncToken: string | null;
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
      return {
        ongoingSyncPointId: text(fields.ongoingSyncPointId),
        lastSuccessfulSyncPointId: text(fields.lastSuccessfulSyncPointId),
        rawKoboSyncToken: text(fields.rawKoboSyncToken),
      };
    } catch {
      return emptySyncToken();
    }
  }
  if (value.includes('.')) return { ...emptySyncToken(), rawKoboSyncToken: value };
  return emptySyncToken();
}

export function encodeSyncToken(token: SyncToken): string {
  const json = JSON.stringify({ ongoingSyncPointId: token.ongoingSyncPointId, lastSuccessfulSyncPointId: token.lastSuccessfulSyncPointId, rawKoboSyncToken: token.rawKoboSyncToken });
  return PREFIX + Buffer.from(json, 'utf8').toString('base64').replace(/=+$/, '');
}

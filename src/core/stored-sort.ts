// Shelves and libraries store their sort as `field,DIRECTION` (Grimmory) or as JSON; both read back as `{field, direction}`.
export function storedSortJson(stored: string | null): Record<string, unknown> | undefined {
  if (!stored) return undefined;
  if (stored.startsWith('{')) {
    try {
      return JSON.parse(stored) as Record<string, unknown>;
    } catch {
      return undefined;
    }
  }
  const [field, direction] = stored.split(',');
  if (!field) return undefined;
  return { field, ...(direction ? { direction } : {}) };
}

// Per-user UI settings: Grimmory's UserSettingKey db keys, their defaults, how values are stored (JSON text or plain
// text) and how the stored rows become the complete `userSettings` object of BookLoreUser.
import type { Db } from '../store/store.ts';
import { invalidInput } from '../auth/account-error.ts';

/** db key → whether the value is stored as JSON text (otherwise as plain text). */
export const USER_SETTING_KEYS: Readonly<Record<string, boolean>> = {
  perBookSetting: true,
  pdfReaderSetting: true,
  newPdfReaderSetting: true,
  epubReaderSetting: true,
  ebookReaderSetting: true,
  cbxReaderSetting: true,
  sidebarLibrarySorting: true,
  sidebarShelfSorting: true,
  sidebarMagicShelfSorting: true,
  entityViewPreferences: true,
  tableColumnPreference: true,
  dashboardConfig: true,
  filterMode: false,
  filterSortingMode: false,
  metadataCenterViewMode: false,
  enableSeriesView: false,
  hardcoverApiKey: false,
  hardcoverSyncEnabled: false,
  autoSaveMetadata: false,
  visibleFilters: true,
  visibleSortFields: true,
};

const sidebarSorting = (): object => ({ field: 'id', order: 'asc' });

/** What every user has until they change it (Grimmory writes these on first use; here they fill in at read time). */
export function defaultUserSettings(): Record<string, unknown> {
  return {
    perBookSetting: { pdf: 'Individual', epub: 'Individual', cbx: 'Individual', newPdf: 'Individual' },
    pdfReaderSetting: { pageSpread: 'off', pageZoom: 'page-fit' },
    epubReaderSetting: { theme: 'white', font: null, fontSize: 100, letterSpacing: null, lineHeight: null, flow: 'paginated', spread: 'double' },
    ebookReaderSetting: {
      fontFamily: 'serif', fontSize: 16, gap: 0.05, hyphenate: false, isDark: false, justify: false, lineHeight: 1.5,
      maxBlockSize: 1440, maxColumnCount: 2, maxInlineSize: 720, theme: 'gray', flow: 'paginated',
    },
    cbxReaderSetting: { pageViewMode: 'SINGLE_PAGE', pageSpread: 'ODD', fitMode: 'FIT_HEIGHT', scrollMode: 'PAGINATED', backgroundColor: 'GRAY', stripMaxWidthPercent: 100 },
    newPdfReaderSetting: { pageViewMode: 'SINGLE_PAGE', pageSpread: 'ODD', fitMode: 'FIT_HEIGHT', scrollMode: 'PAGINATED', backgroundColor: 'WHITE' },
    sidebarLibrarySorting: sidebarSorting(),
    sidebarShelfSorting: sidebarSorting(),
    sidebarMagicShelfSorting: sidebarSorting(),
    entityViewPreferences: { global: { sortKey: 'title', sortDir: 'ASC', view: 'GRID', coverSize: 1.0, seriesCollapsed: false, overlayBookType: true }, overrides: null },
    tableColumnPreference: null,
    filterMode: 'and',
    filterSortingMode: 'count',
    metadataCenterViewMode: 'route',
  };
}

// The JSON shape of each setting as Grimmory's DTO classes have it: stored JSON is read through these, so the
// response carries exactly these properties (absent ones as null, primitives with their Java defaults).
type Shape = 'scalar' | { primitive: boolean | number } | { list: Shape } | { object: Record<string, Shape>; aliases?: Record<string, string> };

const scalar = 'scalar' as const;
const objectOf = (names: string[], extra: Record<string, Shape> = {}, aliases?: Record<string, string>): Shape => ({
  object: { ...Object.fromEntries(names.map((n) => [n, scalar])), ...extra },
  ...(aliases ? { aliases } : {}),
});
const sortCriteria: Shape = { list: objectOf(['field', 'direction']) };
const viewPreferences = (names: string[]): Shape => objectOf(names, { sortCriteria }, { seriesCollapsed: 'seriesCollapse' });

const SHAPES: Record<string, Shape> = {
  perBookSetting: objectOf(['pdf', 'epub', 'cbx', 'newPdf']),
  pdfReaderSetting: objectOf(['pageSpread', 'pageZoom', 'scrollLayout']),
  newPdfReaderSetting: objectOf(['pageSpread', 'pageViewMode', 'backgroundColor', 'fitMode', 'scrollMode']),
  epubReaderSetting: objectOf(['theme', 'font', 'fontSize', 'letterSpacing', 'lineHeight', 'flow', 'spread']),
  ebookReaderSetting: objectOf(['fontFamily', 'fontSize', 'gap', 'hyphenate', 'isDark', 'justify', 'lineHeight', 'maxBlockSize', 'maxColumnCount', 'maxInlineSize', 'theme', 'flow']),
  cbxReaderSetting: objectOf(['pageSpread', 'pageViewMode', 'fitMode', 'scrollMode', 'backgroundColor', 'stripMaxWidthPercent']),
  sidebarLibrarySorting: objectOf(['field', 'order']),
  sidebarShelfSorting: objectOf(['field', 'order']),
  sidebarMagicShelfSorting: objectOf(['field', 'order']),
  entityViewPreferences: objectOf([], {
    global: viewPreferences(['sortKey', 'sortDir', 'view', 'coverSize', 'seriesCollapsed', 'overlayBookType']),
    overrides: { list: objectOf(['entityType', 'entityId'], { preferences: viewPreferences(['sortKey', 'sortDir', 'view', 'seriesCollapsed', 'overlayBookType', 'coverSize']) }) },
  }),
  tableColumnPreference: { list: objectOf(['field', 'visible', 'order']) },
  dashboardConfig: objectOf([], {
    scrollers: {
      list: objectOf(['id', 'type', 'title', 'maxItems', 'magicShelfId', 'sortField', 'sortDirection'], { enabled: { primitive: false }, order: { primitive: 0 } }),
    },
  }),
  visibleFilters: { list: scalar },
  visibleSortFields: { list: scalar },
};

function project(value: unknown, shape: Shape): unknown {
  if (shape === 'scalar') return ['string', 'number', 'boolean'].includes(typeof value) ? value : null;
  if ('primitive' in shape) return typeof value === typeof shape.primitive ? value : shape.primitive;
  if ('list' in shape) return Array.isArray(value) ? value.map((item) => project(item, shape.list)) : null;
  if (!value || typeof value !== 'object' || Array.isArray(value)) return null;
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [name, inner] of Object.entries(shape.object)) {
    const alias = shape.aliases?.[name];
    out[name] = project(source[name] ?? (alias ? source[alias] : undefined), inner);
  }
  return out;
}

const TEXT_SETTINGS = ['filterMode', 'filterSortingMode', 'metadataCenterViewMode'] as const;
const FLAG_SETTINGS = ['enableSeriesView', 'autoSaveMetadata'] as const;

export interface StoredSetting {
  setting_key: string;
  setting_value: string;
}

/** The complete `BookLoreUser.userSettings`: stored values where present, defaults elsewhere. */
export function userSettingsJson(stored: StoredSetting[]): Record<string, unknown> {
  const byKey = new Map(stored.map((s) => [s.setting_key, s.setting_value]));
  const defaults = defaultUserSettings();
  const out: Record<string, unknown> = {};
  for (const [key, shape] of Object.entries(SHAPES)) {
    const raw = byKey.get(key);
    let value: unknown = defaults[key] ?? null;
    if (raw !== undefined) {
      try {
        value = JSON.parse(raw);
      } catch {
        // an unreadable stored value keeps the default
      }
    }
    out[key] = value === null ? null : project(value, shape);
  }
  for (const key of TEXT_SETTINGS) out[key] = byKey.get(key) ?? defaults[key] ?? null;
  out.koReaderEnabled = false;
  for (const key of FLAG_SETTINGS) out[key] = byKey.get(key)?.trim().toLowerCase() === 'true';
  return out;
}

/** The text stored for a setting: JSON for JSON-typed keys, the plain value for the others. */
export function serializeSettingValue(key: string, value: unknown): string {
  if (USER_SETTING_KEYS[key]) return JSON.stringify(value ?? null);
  if (value === null || value === undefined) throw invalidInput('Could not serialize setting value.');
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

export async function saveUserSetting(db: Db, userId: number, key: string | null | undefined, value: unknown): Promise<void> {
  if (key === null || key === undefined || key.trim() === '') throw invalidInput('Setting key cannot be null or blank.');
  if (!Object.hasOwn(USER_SETTING_KEYS, key)) throw invalidInput(`Unknown setting key: ${key}`);
  const text = serializeSettingValue(key, value);
  const now = new Date().toISOString();
  await db
    .insertInto('user_settings')
    .values({ user_id: userId, setting_key: key, setting_value: text, created_at: now, updated_at: now })
    .onConflict((oc) => oc.columns(['user_id', 'setting_key']).doUpdateSet({ setting_value: text, updated_at: now }))
    .execute();
}

export async function loadUserSettings(db: Db, userId: number): Promise<Record<string, unknown>> {
  return userSettingsJson(await db.selectFrom('user_settings').select(['setting_key', 'setting_value']).where('user_id', '=', userId).execute());
}

// Merging what providers found into a book, in two pure steps:
//   1. fetchedMetadata: one value per field, from the first provider in the field's priority list (fieldOptions p1..p4)
//      that has one (categories from all of them with mergeCategories); fields switched off in enabledFields are skipped.
//   2. planMerge: what that does to the book given replaceMode and the locks; the result is a MetadataPatch that
//      metadata-apply.ts writes (a dry run just shows the changes).
import { REFRESH_FIELDS, REPLACE_MODES } from '../settings/setting-shapes.ts';
import { FIELD_SPECS, hasValue, type FieldSpec, type ListField } from './fields.ts';
import { isProviderId, type CandidateComic, type CandidateReview, type MetadataCandidate, type ProviderId } from './provider.ts';
import { parseLooseDate, uniqueStrings } from './values.ts';

export type ReplaceMode = (typeof REPLACE_MODES)[number];

export interface FieldProviders {
  p1: ProviderId | null;
  p2: ProviderId | null;
  p3: ProviderId | null;
  p4: ProviderId | null;
}

/** MetadataRefreshOptions (Grimmory DTO), normalised. */
export interface RefreshOptions {
  libraryId: number | null;
  refreshCovers: boolean;
  mergeCategories: boolean;
  reviewBeforeApply: boolean | null;
  replaceMode: ReplaceMode;
  fieldOptions: Record<string, FieldProviders>;
  enabledFields: Record<string, boolean>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function providerOrNull(v: unknown): ProviderId | null {
  return isProviderId(v) ? v : null;
}

/**
 * Options as a client or the settings give them: a missing or null enabledFields entry is on (Grimmory ignores a null
 * there), unknown providers are dropped, replaceMode defaults to REPLACE_MISSING.
 */
export function refreshOptionsFrom(raw: unknown): RefreshOptions {
  const o = isObject(raw) ? raw : {};
  const fieldOptions: Record<string, FieldProviders> = {};
  const enabledFields: Record<string, boolean> = {};
  const fo = isObject(o.fieldOptions) ? o.fieldOptions : {};
  const ef = isObject(o.enabledFields) ? o.enabledFields : {};
  for (const field of REFRESH_FIELDS) {
    const p = isObject(fo[field]) ? fo[field] : {};
    fieldOptions[field] = { p1: providerOrNull(p.p1), p2: providerOrNull(p.p2), p3: providerOrNull(p.p3), p4: providerOrNull(p.p4) };
    enabledFields[field] = ef[field] !== false;
  }
  const mode = typeof o.replaceMode === 'string' && (REPLACE_MODES as readonly string[]).includes(o.replaceMode) ? (o.replaceMode as ReplaceMode) : 'REPLACE_MISSING';
  return {
    libraryId: typeof o.libraryId === 'number' ? o.libraryId : null,
    refreshCovers: o.refreshCovers === true,
    mergeCategories: o.mergeCategories === true,
    reviewBeforeApply: typeof o.reviewBeforeApply === 'boolean' ? o.reviewBeforeApply : null,
    replaceMode: mode,
    fieldOptions,
    enabledFields,
  };
}

/** The same options with one provider as the only source of every field (`--provider`, a detail pick). */
export function withSingleProvider(options: RefreshOptions, provider: ProviderId): RefreshOptions {
  const fieldOptions: Record<string, FieldProviders> = {};
  for (const field of REFRESH_FIELDS) fieldOptions[field] = { p1: provider, p2: null, p3: null, p4: null };
  return { ...options, fieldOptions };
}

function isEnabled(spec: FieldSpec, options: RefreshOptions): boolean {
  return spec.option === undefined || options.enabledFields[spec.option] !== false;
}

/** The providers a field asks, best first: fieldOptions p1..p4, else the provider that owns it. */
export function fieldProviders(spec: FieldSpec, options: RefreshOptions): ProviderId[] {
  const fp = spec.option ? options.fieldOptions[spec.option] : undefined;
  const listed = fp ? [fp.p1, fp.p2, fp.p3, fp.p4].filter((p): p is ProviderId => p !== null) : [];
  const unique = [...new Set(listed)];
  return unique.length > 0 ? unique : spec.owner ? [spec.owner] : [];
}

/** Providers to ask for a book: every one named in the priorities of an enabled field and usable right now. */
export function providersToQuery(options: RefreshOptions, usable: (id: ProviderId) => boolean): ProviderId[] {
  const out = new Set<ProviderId>();
  for (const spec of FIELD_SPECS) {
    if (!isEnabled(spec, options) || !spec.option) continue;
    const fp = options.fieldOptions[spec.option];
    for (const p of fp ? [fp.p1, fp.p2, fp.p3, fp.p4] : []) if (p && usable(p)) out.add(p);
  }
  return [...out];
}

/** A candidate's value for a field, normalised to the field's kind; undefined when it has none. */
function valueOf(candidate: MetadataCandidate, spec: FieldSpec): unknown {
  const raw = (candidate as unknown as Record<string, unknown>)[spec.field];
  switch (spec.kind) {
    case 'text':
    case 'cover':
      return typeof raw === 'string' && raw.trim() !== '' ? raw.trim() : undefined;
    case 'date':
      return parseLooseDate(raw);
    case 'number':
      return typeof raw === 'number' && Number.isFinite(raw) ? raw : undefined;
    case 'integer':
      return typeof raw === 'number' && Number.isFinite(raw) ? Math.trunc(raw) : undefined;
    case 'boolean':
      return typeof raw === 'boolean' ? raw : undefined;
    case 'list': {
      const list = Array.isArray(raw) ? uniqueStrings(raw.filter((s): s is string => typeof s === 'string')) : [];
      return list.length > 0 ? list : undefined;
    }
  }
}

/** What the providers say about one book, resolved field by field. */
export interface FetchedMetadata {
  /** BookMetadata (wire names): only fields some provider had a value for. */
  metadata: Record<string, unknown>;
  /** Field → the provider its value came from (the first one, for merged categories). */
  sources: Record<string, ProviderId>;
  /** Enabled fields every asked provider answered without a value for (REPLACE_ALL clears these). */
  unanswered: string[];
}

export function fetchedMetadata(found: ReadonlyMap<ProviderId, MetadataCandidate>, options: RefreshOptions): FetchedMetadata {
  const metadata: Record<string, unknown> = {};
  const sources: Record<string, ProviderId> = {};
  const unanswered: string[] = [];
  for (const spec of FIELD_SPECS) {
    if (!isEnabled(spec, options)) continue;
    const providers = fieldProviders(spec, options);
    if (spec.field === 'categories' && options.mergeCategories) {
      const merged: string[] = [];
      for (const p of providers) {
        const c = found.get(p);
        const v = c ? valueOf(c, spec) : undefined;
        if (Array.isArray(v)) {
          if (merged.length === 0) sources[spec.field] = p;
          merged.push(...(v as string[]));
        }
      }
      if (merged.length > 0) metadata.categories = uniqueStrings(merged);
      else if (providers.length > 0 && providers.every((p) => found.has(p))) unanswered.push(spec.field);
      continue;
    }
    let resolved = false;
    for (const p of providers) {
      const c = found.get(p);
      const v = c ? valueOf(c, spec) : undefined;
      if (v !== undefined) {
        metadata[spec.field] = v;
        sources[spec.field] = p;
        resolved = true;
        break;
      }
    }
    if (!resolved && providers.length > 0 && providers.every((p) => found.has(p))) unanswered.push(spec.field);
  }
  const comicSource = [found.get('Comicvine'), ...found.values()].find((c) => c?.comicMetadata !== undefined);
  if (comicSource?.comicMetadata) metadata.comicMetadata = comicSource.comicMetadata;
  const reviews: CandidateReview[] = [];
  for (const [provider, c] of found) for (const r of c.bookReviews ?? []) reviews.push({ metadataProvider: provider, ...r });
  if (reviews.length > 0) metadata.bookReviews = reviews;
  return { metadata, sources, unanswered };
}

/** A book's metadata as it is now, in wire names, with its locks. */
export interface CurrentMetadata {
  values: Record<string, unknown>;
  /** Wire names of locked fields (`title`, `authors`, `thumbnailUrl` for the cover, …). */
  locked: ReadonlySet<string>;
  allLocked: boolean;
  hasCover: boolean;
}

export interface FieldChange {
  field: string;
  from: unknown;
  to: unknown;
  source?: ProviderId;
}

/** book_metadata columns → value, list replacements, the cover to fetch, comic details: what applying writes. */
export interface MergePlan {
  changes: FieldChange[];
  /** Fields a provider had a value for that stay as they are because they are locked. */
  lockedFields: string[];
  columns: Record<string, string | number | null>;
  lists: Partial<Record<ListField, string[]>>;
  coverUrl?: string;
  comic?: CandidateComic;
  /** allMetadataLocked: nothing is written at all. */
  allLocked: boolean;
}

export interface MergeSettings {
  replaceMode: ReplaceMode;
  mergeCategories: boolean;
  refreshCovers: boolean;
}

/** Fields REPLACE_ALL never empties even when every provider answered without them. */
const NEVER_CLEARED = new Set(['title', 'authors', 'thumbnailUrl']);

function sameValue(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => x === b[i]);
  if (typeof a === 'number' && typeof b === 'number') return Math.abs(a - b) < 1e-9;
  return a === b || (!hasValue(a) && !hasValue(b));
}

function columnValue(spec: FieldSpec, value: unknown): string | number | null {
  if (value === null || value === undefined) return null;
  if (spec.kind === 'boolean') return value === true ? 1 : 0;
  return value as string | number;
}

/** Lists merged rather than replaced: categories with mergeCategories, moods and tags unless REPLACE_ALL (as Grimmory does). */
function mergesList(field: string, settings: MergeSettings): boolean {
  if (field === 'categories') return settings.mergeCategories;
  if (field === 'moods' || field === 'tags') return settings.replaceMode !== 'REPLACE_ALL';
  return false;
}

/**
 * What merging the fetched metadata does to the book:
 * - REPLACE_MISSING: only empty fields are filled.
 * - REPLACE_WHEN_PROVIDED: every field a provider had a value for is replaced; the others stay.
 * - REPLACE_ALL: as REPLACE_WHEN_PROVIDED, and a field every asked provider answered without is emptied (except the
 *   title, the authors and the cover); moods and tags are replaced instead of merged.
 * A locked field, or every field with allMetadataLocked, is never touched. The cover is replaced with refreshCovers,
 * and otherwise only given to a book that has none.
 */
export function planMerge(current: CurrentMetadata, fetched: FetchedMetadata, settings: MergeSettings): MergePlan {
  const plan: MergePlan = { changes: [], lockedFields: [], columns: {}, lists: {}, allLocked: current.allLocked };
  if (current.allLocked) return plan;
  const unanswered = new Set(fetched.unanswered);
  for (const spec of FIELD_SPECS) {
    const next = fetched.metadata[spec.field];
    const now = current.values[spec.field];
    const provided = hasValue(next);
    const clear = !provided && settings.replaceMode === 'REPLACE_ALL' && unanswered.has(spec.field) && !NEVER_CLEARED.has(spec.field) && hasValue(now);
    if (!provided && !clear) continue;
    if (current.locked.has(spec.field)) {
      plan.lockedFields.push(spec.field);
      continue;
    }
    const source = fetched.sources[spec.field];
    const note = (to: unknown): void => {
      plan.changes.push({ field: spec.field, from: now ?? null, to, ...(source ? { source } : {}) });
    };
    if (spec.kind === 'cover') {
      if (provided && (settings.refreshCovers || !current.hasCover)) {
        plan.coverUrl = next as string;
        note(next);
      }
      continue;
    }
    if (settings.replaceMode === 'REPLACE_MISSING' && hasValue(now)) continue;
    if (spec.kind === 'list') {
      const field = spec.field as ListField;
      const have = Array.isArray(now) ? (now as string[]) : [];
      const incoming = clear ? [] : (next as string[]);
      const wanted = mergesList(field, settings) ? uniqueStrings([...have, ...incoming]) : incoming;
      if (sameValue(have, wanted)) continue;
      plan.lists[field] = wanted;
      note(wanted);
      continue;
    }
    const value = clear ? null : next;
    if (sameValue(now, value)) continue;
    if (spec.column) plan.columns[spec.column] = columnValue(spec, value);
    note(value);
  }
  const comic = fetched.metadata.comicMetadata;
  if (isObject(comic) && Object.keys(comic).length > 0) plan.comic = comic as CandidateComic;
  return plan;
}

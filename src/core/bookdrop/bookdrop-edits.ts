// Editing the metadata of files waiting in the bookdrop: read from their file names by a pattern, or set on many at
// once. Both edit the "fetched" metadata (what an import uses when the request names none), as Grimmory does.
import type { Db } from '../store/store.ts';
import { nowIso } from '../time.ts';
import { BookdropError, rowsByIds, selectedIds, type BookdropRow, type Selection } from './bookdrop-files.ts';
import { dropMetadata, parseStoredMetadata, type DropMetadata } from './bookdrop-metadata.ts';
import { extractFromFileName, parseNamePattern } from './filename-pattern.ts';

/** The metadata edits start from: what was fetched (or edited before), else nothing. */
function editable(row: BookdropRow): DropMetadata {
  return parseStoredMetadata(row.fetched_metadata) ?? {};
}

async function saveEdited(db: Db, edits: { id: number; metadata: DropMetadata }[]): Promise<void> {
  if (edits.length === 0) return;
  const now = nowIso();
  await db.transaction().execute(async (trx) => {
    for (const e of edits) await trx.updateTable('bookdrop_file').set({ fetched_metadata: JSON.stringify(e.metadata), updated_at: now }).where('id', '=', e.id).execute();
  });
}

/** The fields a file name can fill, laid over what is there. */
const NAME_FIELDS = ['seriesName', 'title', 'subtitle', 'authors', 'seriesNumber', 'publishedDate', 'publisher', 'language', 'seriesTotal', 'isbn10', 'isbn13', 'asin'] as const;

export interface PatternExtractRequest extends Selection {
  pattern: string;
  preview?: boolean | null;
}

export interface FileExtraction {
  fileId: number;
  fileName: string;
  success: boolean;
  extractedMetadata?: DropMetadata;
  errorMessage?: string;
}

export interface PatternExtractResult {
  totalFiles: number;
  successfullyExtracted: number;
  failed: number;
  results: FileExtraction[];
}

const PREVIEW_LIMIT = 5;

/**
 * Reads metadata from the selected files' names. A preview looks at the first five and changes nothing; otherwise
 * what was read is stored for every file the pattern matched.
 */
export async function extractFromPattern(db: Db, request: PatternExtractRequest): Promise<PatternExtractResult> {
  const ids = await selectedIds(db, request);
  const parsed = parseNamePattern(request.pattern);
  if (!parsed) throw new BookdropError('INVALID', 'pattern: must not be blank');
  const preview = request.preview === true;
  const rows = await rowsByIds(db, preview ? ids.slice(0, PREVIEW_LIMIT) : ids);
  const results: FileExtraction[] = [];
  const edits: { id: number; metadata: DropMetadata }[] = [];
  for (const row of rows) {
    const extracted = extractFromFileName(row.file_name, parsed);
    if (!extracted) {
      results.push({ fileId: row.id, fileName: row.file_name, success: false, errorMessage: 'Pattern did not match filename structure. Check if the pattern aligns with the filename format.' });
      continue;
    }
    results.push({ fileId: row.id, fileName: row.file_name, success: true, extractedMetadata: extracted });
    if (!preview) {
      const merged: Record<string, unknown> = { ...editable(row) };
      for (const field of NAME_FIELDS) if (extracted[field] !== undefined) merged[field] = extracted[field];
      edits.push({ id: row.id, metadata: dropMetadata(merged) });
    }
  }
  await saveEdited(db, edits);
  const successes = results.filter((r) => r.success).length;
  return { totalFiles: ids.length, successfullyExtracted: successes, failed: rows.length - successes, results };
}

export interface BulkEditRequest extends Selection {
  fields: unknown;
  enabledFields: readonly string[];
  mergeArrays?: boolean | null;
}

export interface BulkEditResult {
  totalFiles: number;
  successfullyUpdated: number;
  failed: number;
}

const SCALAR_EDITS = ['seriesName', 'seriesTotal', 'publisher', 'language'] as const;
const LIST_EDITS = ['authors', 'categories', 'moods', 'tags'] as const;

/**
 * Sets the enabled fields (series name and total, publisher, language, authors, categories, moods, tags) on every
 * selected file; lists are replaced, or added to with `mergeArrays`.
 */
export async function bulkEdit(db: Db, request: BulkEditRequest): Promise<BulkEditResult> {
  const ids = await selectedIds(db, request);
  const fields = request.fields && typeof request.fields === 'object' ? (request.fields as Record<string, unknown>) : {};
  const updates = dropMetadata(fields);
  const enabled = new Set(request.enabledFields);
  const rows = await rowsByIds(db, ids);
  const edits = rows.map((row) => {
    const next: Record<string, unknown> = { ...editable(row) };
    for (const field of SCALAR_EDITS) {
      // An empty text counts as given (it clears the field), as in Grimmory.
      if (!enabled.has(field)) continue;
      if (updates[field] !== undefined) next[field] = updates[field];
      else if (fields[field] === '') delete next[field];
    }
    for (const field of LIST_EDITS) {
      if (!enabled.has(field) || !Array.isArray(fields[field])) continue;
      const given = updates[field] ?? [];
      const current = (next[field] as string[] | undefined) ?? [];
      next[field] = request.mergeArrays ? [...new Set([...current, ...given])] : given;
    }
    return { id: row.id, metadata: dropMetadata(next) };
  });
  await saveEdited(db, edits);
  return { totalFiles: ids.length, successfullyUpdated: edits.length, failed: ids.length - edits.length };
}

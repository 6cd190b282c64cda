// Grimmory's `Library` JSON (nulls omitted; paths carry their id and folder).
import { storedSortJson } from '../stored-sort.ts';
import type { Library } from './libraries.ts';

export function libraryJson(library: Library): Record<string, unknown> {
  const out: Record<string, unknown> = { id: library.id, name: library.name };
  const sort = storedSortJson(library.sort);
  if (sort) out.sort = sort;
  if (library.icon !== null) out.icon = library.icon;
  if (library.iconType !== null) out.iconType = library.iconType;
  if (library.fileNamingPattern !== null) out.fileNamingPattern = library.fileNamingPattern;
  out.watch = library.watch;
  out.paths = library.paths.map((p) => ({ id: p.id, path: p.path }));
  if (library.formatPriority !== null) out.formatPriority = library.formatPriority;
  if (library.allowedFormats !== null) out.allowedFormats = library.allowedFormats;
  out.organizationMode = library.organizationMode;
  out.metadataSource = library.metadataSource;
  return out;
}

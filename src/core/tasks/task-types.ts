// Grimmory's TaskType values with what the server records about each (behaviors.md §8). Descriptions are Bindery's.
export const TASK_TYPES = [
  'REFRESH_LIBRARY_METADATA', 'UPDATE_BOOK_RECOMMENDATIONS', 'CLEANUP_DELETED_BOOKS', 'SYNC_LIBRARY_FILES',
  'BOOKDROP_PERIODIC_SCANNING', 'CLEANUP_TEMP_METADATA', 'REFRESH_METADATA_MANUAL',
  // Bindery's own (not in Grimmory's enum): the web UI lists it from GET /api/v1/tasks with its name and description.
  'BACKUP',
] as const;
export type TaskType = (typeof TASK_TYPES)[number];

export interface TaskTypeInfo {
  parallel: boolean;
  async: boolean;
  cronSupported: boolean;
  hiddenFromUI: boolean;
  name: string;
  description: string;
}

export const TASK_TYPE_INFO: Record<TaskType, TaskTypeInfo> = {
  REFRESH_LIBRARY_METADATA: { parallel: false, async: true, cronSupported: false, hiddenFromUI: false, name: 'Refresh Metadata', description: 'Reads every book file again and updates the catalog with what the files say.' },
  UPDATE_BOOK_RECOMMENDATIONS: { parallel: false, async: true, cronSupported: true, hiddenFromUI: false, name: 'Update Book Recommendations', description: 'Works out similar books for recommendations.' },
  CLEANUP_DELETED_BOOKS: { parallel: false, async: false, cronSupported: true, hiddenFromUI: false, name: 'Cleanup Deleted Books', description: 'Forgets catalog entries of books deleted earlier.' },
  SYNC_LIBRARY_FILES: { parallel: false, async: false, cronSupported: true, hiddenFromUI: false, name: 'Sync Library Files', description: 'Scans the library folders for new, changed and vanished files.' },
  BOOKDROP_PERIODIC_SCANNING: { parallel: false, async: false, cronSupported: true, hiddenFromUI: false, name: 'Bookdrop Periodic Scanning', description: 'Looks for new files in the bookdrop folder.' },
  CLEANUP_TEMP_METADATA: { parallel: false, async: false, cronSupported: true, hiddenFromUI: false, name: 'Cleanup Temporary Metadata', description: 'Removes metadata fetched for bookdrop files and reviews that are no longer needed.' },
  REFRESH_METADATA_MANUAL: { parallel: false, async: true, cronSupported: false, hiddenFromUI: true, name: 'Refresh Metadata', description: 'Fetches metadata from the providers for the chosen books.' },
  BACKUP: { parallel: false, async: true, cronSupported: true, hiddenFromUI: false, name: 'Backup', description: 'Writes a backup archive (catalog, covers, icons, fonts, settings) and deletes scheduled backups past their retention.' },
};

export function isTaskType(value: unknown): value is TaskType {
  return typeof value === 'string' && (TASK_TYPES as readonly string[]).includes(value);
}

export const TASK_RUN_STATUSES = ['ACCEPTED', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED'] as const;
export type TaskRunStatus = (typeof TASK_RUN_STATUSES)[number];

// Background library scans: at most one per library at a time; a request during a scan runs one more scan after it
// (over everything asked for meanwhile), and a library being deleted has its scan stopped first.
import type { Store } from '../store/store.ts';
import type { ScanSummary } from '../scan/scanner.ts';
import { findLibrary } from './libraries.ts';

export interface ScanJobSettings {
  coversRoot: string;
  workers: number;
  /** Called with every scan's promise, so the owner can wait for them on shutdown. */
  track?: (job: Promise<unknown>) => void;
  /** `folders` when the scan was limited to some folders. */
  onFinished?: (summary: ScanSummary, folders?: readonly string[]) => void;
  onFailed?: (libraryId: number, error: unknown) => void;
}

/** What a scan covers: the whole library, or some of its folders. */
type ScanScope = 'library' | Set<string>;

interface Job {
  libraryId: number;
  /** What the next round scans; undefined when nothing more was asked. */
  next: ScanScope | undefined;
  cancelled: boolean;
  done: Promise<void>;
}

function widen(scope: ScanScope | undefined, folders: readonly string[] | undefined): ScanScope {
  if (!folders || scope === 'library') return 'library';
  return new Set([...(scope ?? []), ...folders]);
}

class ScanCancelled extends Error {
  override name = 'ScanCancelled';
}

export class LibraryScanJobs {
  private readonly store: Store;
  private readonly settings: ScanJobSettings;
  private readonly jobs = new Map<number, Job>();

  constructor(store: Store, settings: ScanJobSettings) {
    this.store = store;
    this.settings = settings;
  }

  /**
   * Starts a scan of the library (or only of `folders`, absolute paths under its folders), or asks the running one to
   * go round once more.
   */
  request(libraryId: number, folders?: readonly string[]): 'started' | 'queued' {
    const running = this.jobs.get(libraryId);
    if (running && !running.cancelled) {
      running.next = widen(running.next, folders);
      return 'queued';
    }
    const job: Job = { libraryId, next: widen(undefined, folders), cancelled: false, done: Promise.resolve() };
    job.done = this.run(job).finally(() => {
      if (this.jobs.get(libraryId) === job) this.jobs.delete(libraryId);
    });
    this.jobs.set(libraryId, job);
    this.settings.track?.(job.done);
    return 'started';
  }

  isScanning(libraryId: number): boolean {
    return this.jobs.has(libraryId);
  }

  /** Stops the library's scan at its next step and waits until it has let go. */
  async cancel(libraryId: number): Promise<void> {
    const job = this.jobs.get(libraryId);
    if (!job) return;
    job.cancelled = true;
    job.next = undefined;
    await job.done;
  }

  /** Stops every scan (for shutdown); a stopped scan leaves the catalog as its last committed batch did. */
  async cancelAll(): Promise<void> {
    await Promise.all([...this.jobs.keys()].map((id) => this.cancel(id)));
  }

  /** Resolves when no scan is running (scans requested meanwhile included). */
  async idle(): Promise<void> {
    while (this.jobs.size > 0) await Promise.allSettled([...this.jobs.values()].map((j) => j.done));
  }

  private async run(job: Job): Promise<void> {
    const stopIfCancelled = (): void => {
      if (job.cancelled) throw new ScanCancelled();
    };
    while (job.next && !job.cancelled) {
      const scope = job.next;
      job.next = undefined;
      const folders = scope === 'library' ? undefined : [...scope];
      const library = await findLibrary(this.store.db, job.libraryId).catch(() => undefined);
      if (!library || job.cancelled) return;
      try {
        const { scanLibrary } = await import('../scan/scanner.ts');
        const summary = await scanLibrary(this.store, library, { coversRoot: this.settings.coversRoot, workers: this.settings.workers, onProgress: stopIfCancelled, ...(folders ? { folders } : {}) });
        this.settings.onFinished?.(summary, folders);
      } catch (error) {
        if (error instanceof ScanCancelled) return;
        this.settings.onFailed?.(job.libraryId, error);
      }
    }
  }
}

const registry = new WeakMap<Store, LibraryScanJobs>();

/** The scan jobs of a catalog if any were ever requested (e.g. to stop them on shutdown). */
export function existingScanJobs(store: Store): LibraryScanJobs | undefined {
  return registry.get(store);
}

/** The scan jobs of a catalog; the first caller's settings are kept. */
export function libraryScanJobs(store: Store, settings: ScanJobSettings): LibraryScanJobs {
  let jobs = registry.get(store);
  if (!jobs) registry.set(store, (jobs = new LibraryScanJobs(store, settings)));
  return jobs;
}

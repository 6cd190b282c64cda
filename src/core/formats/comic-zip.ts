// CBZ backend: the shared ZipArchive (which already refuses unsafe names and bombs while indexing).
import type { ArchiveBackend, ArchiveOpenOptions, RawArchiveEntry } from './comic-archive.ts';
import { ZipArchive } from './zip.ts';

export async function openZipBackend(path: string, options: ArchiveOpenOptions = {}): Promise<ArchiveBackend> {
  const zip = await ZipArchive.open(path, options);
  return {
    list: async (): Promise<RawArchiveEntry[]> =>
      zip.entries.map((e) => ({ name: e.name, size: e.size, compressedSize: e.compressedSize, isDirectory: e.isDirectory })),
    read: (entry, maxBytes) => zip.read(entry.name, maxBytes),
    readHead: (entry, bytes) => zip.readHead(entry.name, bytes),
    close: async () => zip.close(),
  };
}

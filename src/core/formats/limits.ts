// Caps that turn hostile input into a per-file error instead of exhausting memory or disk.

export const LIMITS = {
  /** Largest single archive entry we will inflate into memory (OPF, ComicInfo, a cover image). */
  maxEntryBytes: 64 * 1024 * 1024,
  /** Largest metadata document (OPF, ComicInfo.xml, FB2 without binaries) we parse. */
  maxXmlBytes: 16 * 1024 * 1024,
  /** An entry whose declared size exceeds its compressed size by more than this ratio is a bomb. */
  maxCompressionRatio: 200,
  /** Ratio checks only apply above this size: tiny entries compress absurdly well legitimately. */
  ratioCheckFloorBytes: 1024 * 1024,
  /** Sum of declared uncompressed sizes of all entries. */
  maxTotalExpandedBytes: 8 * 1024 * 1024 * 1024,
  /** Most entries in one archive. */
  maxEntries: 100_000,
  /** Largest image (width × height) we decode. */
  maxImagePixels: 100_000_000,
  /** Most pages a comic archive may have; one with more is refused (TOO_LARGE) wherever its pages are listed. */
  maxPages: 10_000,
  /** What is read of a page to learn its size in pixels: the image header, not the picture. */
  pageHeaderBytes: 64 * 1024,
  /** Longest one computation over all of an archive's pages (their sizes) may run before it is given up (TOO_LARGE). */
  maxArchiveWorkMs: 20_000,
} as const;

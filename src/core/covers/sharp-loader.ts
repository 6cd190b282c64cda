// sharp (libvips) is loaded on the first image operation, not at start: a daemon that has not yet made a cover keeps
// libvips' ~8 MB of code and its thread pool out of memory.
import type SharpModule from 'sharp';

type Sharp = typeof SharpModule;
let loading: Promise<Sharp> | undefined;

export function loadSharp(): Promise<Sharp> {
  return (loading ??= import('sharp').then(({ default: sharp }) => {
    // Covers are made once each: libvips' operation cache would only hold memory.
    sharp.cache(false);
    return sharp;
  }));
}

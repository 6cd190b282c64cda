// Placeholder until the comic extractor lands.
import { FormatError } from './errors.ts';
import type { Extraction } from './types.ts';
export async function extractComic(_path: string): Promise<Extraction> { throw new FormatError('UNSUPPORTED', 'comic not implemented'); }

// Placeholder until the epub extractor lands.
import { FormatError } from './errors.ts';
import type { Extraction } from './types.ts';
export async function extractEpub(_path: string): Promise<Extraction> { throw new FormatError('UNSUPPORTED', 'epub not implemented'); }

// Placeholder until the fb2 extractor lands.
import { FormatError } from './errors.ts';
import type { Extraction } from './types.ts';
export async function extractFb2(_path: string): Promise<Extraction> { throw new FormatError('UNSUPPORTED', 'fb2 not implemented'); }

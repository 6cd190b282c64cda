// Placeholder until the mobi extractor lands.
import { FormatError } from './errors.ts';
import type { Extraction } from './types.ts';
export async function extractMobi(_path: string): Promise<Extraction> { throw new FormatError('UNSUPPORTED', 'mobi not implemented'); }

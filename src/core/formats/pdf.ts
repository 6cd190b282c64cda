// Placeholder until the pdf extractor lands.
import { FormatError } from './errors.ts';
import type { Extraction } from './types.ts';
export async function extractPdf(_path: string): Promise<Extraction> { throw new FormatError('UNSUPPORTED', 'pdf not implemented'); }

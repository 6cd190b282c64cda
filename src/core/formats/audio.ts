// Placeholder until the audio extractor lands.
import { FormatError } from './errors.ts';
import type { Extraction } from './types.ts';
export async function extractAudioFile(_path: string): Promise<Extraction> { throw new FormatError('UNSUPPORTED', 'audio not implemented'); }
export async function extractAudioFolder(_path: string): Promise<Extraction> { throw new FormatError('UNSUPPORTED', 'audio not implemented'); }

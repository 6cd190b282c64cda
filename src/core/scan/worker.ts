// Worker-thread entry for the scan pool.
import sharp from 'sharp';
import { parseTask, type ParseTask, type ParseResult } from './parse-task.ts';

// Each worker already runs in parallel with the others; libvips' own threads would only oversubscribe the cores.
sharp.concurrency(1);
sharp.cache(false);

export default function run(task: ParseTask): Promise<ParseResult> {
  return parseTask(task);
}

// Worker-thread entry for the scan pool: walks a root, or parses one file.
import type { ParseResult, ParseTask, parseTask } from './parse-task.ts';
import { walkRootSync, type WalkResult } from './walk.ts';
import { loadSharp } from '../covers/sharp-loader.ts';

export interface WalkTask {
  walkRoot: string;
  folders?: string[];
}

type ParseTaskModule = { parseTask: typeof parseTask };
let parser: Promise<ParseTaskModule> | undefined;

// Loaded with the first file, not with the walk: a rescan that finds nothing new never loads sharp or an extractor.
async function loadParser(): Promise<ParseTaskModule> {
  const sharp = await loadSharp();
  // Each worker already runs in parallel with the others; libvips' own threads would only oversubscribe the cores.
  sharp.concurrency(1);
  return import('./parse-task.ts');
}

export default async function run(task: ParseTask | WalkTask): Promise<ParseResult | WalkResult> {
  if ('walkRoot' in task) return walkRootSync(task.walkRoot, task.folders);
  return (await (parser ??= loadParser())).parseTask(task);
}

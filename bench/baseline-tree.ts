// The code of a git ref, exported once into bench/.corpus/baseline-<commit> (no git worktree), sharing this tree's
// node_modules: the "before" side of the A/B benchmarks (bench:scan, bench:feeds).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function baselineTree(ref: string): string {
  const here = import.meta.dirname;
  const commit = execFileSync('git', ['rev-parse', '--short', ref], { encoding: 'utf8', cwd: here }).trim();
  const tree = join(here, '.corpus', `baseline-${commit}`);
  if (!existsSync(join(tree, '.complete'))) {
    rmSync(tree, { recursive: true, force: true });
    mkdirSync(tree, { recursive: true });
    execFileSync('sh', ['-c', `git archive ${commit} | tar -x -C '${tree}'`], { cwd: join(here, '..') });
    symlinkSync(join(here, '..', 'node_modules'), join(tree, 'node_modules'));
    writeFileSync(join(tree, '.complete'), '');
  }
  return tree;
}

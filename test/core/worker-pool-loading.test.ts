import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const source = (file: string): string => JSON.stringify(path.join(root, file));

describe('worker pools', () => {
  it('load piscina with the first task, not with the modules that use it, and work on that first use', () => {
    // A fresh process: the modules that make pools are imported (as the daemon does at start), then a password is
    // hashed and checked, which makes the first pool.
    const script = `
      import { registerHooks } from 'node:module';
      const seen = [];
      registerHooks({ resolve(specifier, context, next) { if (specifier === 'piscina') seen.push(specifier); return next(specifier, context); } });
      const { hashPassword, verifyPassword, passwordPoolState } = await import(${source('src/core/auth/password-hashing.ts')});
      await import(${source('src/core/store/read-aside.ts')});
      await import(${source('src/core/scan/task-runner.ts')});
      const atStart = seen.length;
      const threadsBefore = passwordPoolState().threads;
      const hash = await hashPassword('first use');
      const right = await verifyPassword('first use', hash);
      const wrong = await verifyPassword('second use', hash);
      process.stdout.write(JSON.stringify({ atStart, threadsBefore, after: seen.length, right, wrong, bcrypt: /^\\$2[aby]\\$10\\$/.test(hash) }));
      process.exit(0);`;
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
    expect(JSON.parse(output)).toEqual({ atStart: 0, threadsBefore: 0, after: 1, right: true, wrong: false, bcrypt: true });
  });
});

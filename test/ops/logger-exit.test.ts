import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { expect, it } from 'vitest';

// A supervisor killed, a test runner gone: the reader of a process's stdout may die before the process exits.
it('a process whose stdout reader is gone still exits: its last log lines do not hang process.exit', async () => {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `const { createLogger } = await import('./src/deps.ts');
       const log = createLogger({ LOG_LEVEL: 'info' });
       process.stdin.once('data', () => {
         for (let i = 0; i < 2000; i++) log.info({ i }, 'a line nobody reads');
         process.exit(3);
       });
       process.stderr.write('ready\\n');`,
    ],
    { cwd: process.cwd(), stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  while (!stderr.includes('ready')) await once(child.stderr, 'data');
  child.stdout.destroy();
  child.stdin.write('go\n');
  const [code] = (await once(child, 'exit')) as [number | null];
  expect(code).toBe(3);
}, 20_000);

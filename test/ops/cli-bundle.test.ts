// The `pigeon` command runs the bundle `npm start` runs, not TypeScript through tsx: it builds dist/main.js when
// it is missing or older than a file of src/ or the last install (the bundle holds some packages), and runs
// src/ through tsx only when the bundle cannot be built. Each run is in a scratch copy of the checkout (its own
// src/, package.json and dist/; node_modules shared).
import { execFile } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const checkout = join(import.meta.dirname, '..', '..');

describe('the pigeon command', () => {
  let root: string;
  const bundle = () => join(root, 'dist', 'main.js');
  const pigeon = (...args: string[]) =>
    run(process.execPath, [join(root, 'bin', 'pigeon.js'), ...args], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: join(root, 'data', 'pigeon.db') },
    });

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'pigeon-bin-'));
    for (const copied of ['bin', 'scripts', 'src', 'package.json'])
      cpSync(join(checkout, copied), join(root, copied), { recursive: true });
    symlinkSync(join(checkout, 'node_modules'), join(root, 'node_modules'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('builds the missing bundle and runs it; a newer source file rebuilds it, an unchanged tree does not', async () => {
    const help = await pigeon('--help');
    expect(help.stdout).toMatch(/^usage: pigeon <command>/);
    expect(help.stderr).toBe('');
    const built = statSync(bundle()).mtimeMs;

    // Nothing changed: the same bundle runs again, unbuilt.
    await pigeon('--help');
    expect(statSync(bundle()).mtimeMs).toBe(built);

    // A source saved after the build: the next command rebuilds first, and runs the new code.
    const usageFile = join(root, 'src', 'cli-usage.ts');
    const later = new Date(built + 5_000);
    writeFileSync(
      usageFile,
      readFileSync(usageFile, 'utf8').replace('usage: pigeon <command>', 'usage: pigeon <the command>'),
    );
    utimesSync(usageFile, later, later);
    const rebuilt = await pigeon('--help');
    expect(rebuilt.stdout).toMatch(/^usage: pigeon <the command>/);
    const rebuiltAt = statSync(bundle()).mtimeMs;
    expect(rebuiltAt).toBeGreaterThan(built);

    // An install after that build (package.json, or node_modules/.package-lock.json, newer): built again.
    const installedAt = new Date(rebuiltAt + 5_000);
    utimesSync(join(root, 'package.json'), installedAt, installedAt);
    await pigeon('--help');
    expect(statSync(bundle()).mtimeMs).toBeGreaterThan(rebuiltAt);
  });

  it('runs src/ through tsx, saying so, when the bundle cannot be built', async () => {
    rmSync(join(root, 'dist'), { recursive: true, force: true });
    // dist is a file: nothing can be written under it (even by root, for whom permissions would not stop it).
    writeFileSync(join(root, 'dist'), 'not a folder');
    try {
      const help = await pigeon('--help');
      expect(help.stdout).toMatch(/^usage: pigeon/);
      expect(help.stderr).toMatch(/cannot build .*dist\/main\.js .*running src\/ through tsx/);
    } finally {
      rmSync(join(root, 'dist'), { force: true });
      mkdirSync(join(root, 'dist'));
    }
  });
});

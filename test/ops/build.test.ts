// The build `npm start` runs at every start (scripts/build.mjs): processes started together from one checkout
// build at the same time, and none of them may load a half-written bundle. Each file of dist/ is replaced
// whole (written aside, renamed into place): a process that opened the old one reads it whole, a reader of the
// path finds the old file or the new one, never a part. The builds run in a scratch copy of the checkout.
import { execFile } from 'node:child_process';
import {
  cpSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const checkout = join(import.meta.dirname, '..', '..');
const ending = '//# sourceMappingURL=main.js.map\n';

describe('the build of npm start', () => {
  let root: string;
  const build = () => run(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root });
  const bundle = () => join(root, 'dist', 'main.js');

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'pigeon-build-'));
    cpSync(join(checkout, 'scripts'), join(root, 'scripts'), { recursive: true });
    for (const shared of ['src', 'console', 'node_modules', 'package.json']) {
      symlinkSync(join(checkout, shared), join(root, shared));
    }
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('replaces dist/main.js whole: a process that opened the old bundle reads it whole, to its last line', async () => {
    await build();
    const first = readFileSync(bundle());
    const opened = openSync(bundle(), 'r');
    const inode = statSync(bundle()).ino;
    await build();
    // A new file took the path; the one opened before is untouched, not truncated and rewritten in place.
    expect(statSync(bundle()).ino).not.toBe(inode);
    const again = Buffer.alloc(first.length + 1);
    const read = readSync(opened, again, 0, again.length, 0);
    expect(read).toBe(first.length);
    expect(again.subarray(0, read).equals(first)).toBe(true);
    expect(readFileSync(bundle(), 'utf8').endsWith(ending)).toBe(true);
  });

  it('two builds at once never leave a partial bundle or console page readable, nor a temporary file', async () => {
    // A start before these left a bundle: the two builds replace it while it is read.
    await build();
    const builds = Promise.all([build(), build()]);
    let done = false;
    builds
      .finally(() => {
        done = true;
      })
      .catch(() => {});
    let reads = 0;
    try {
      while (!done) {
        const text = readFileSync(bundle(), 'utf8');
        expect(text.endsWith(ending), `read ${reads}: ${text.length} characters`).toBe(true);
        expect(readFileSync(join(root, 'dist', 'console', 'index.html'), 'utf8')).toContain('</html>');
        reads++;
        await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      // A failed read leaves the builds running: they finish before the scratch copy is removed.
      await builds.catch(() => {});
    }
    await builds;
    expect(reads).toBeGreaterThan(0);
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? files(join(dir, e.name)).map((f) => `${e.name}/${f}`) : [e.name],
      );
    expect(files(join(root, 'dist')).sort()).toEqual([
      'console/assets/app.css',
      'console/assets/app.css.map',
      'console/assets/app.js',
      'console/assets/app.js.map',
      'console/index.html',
      'main.js',
      'main.js.map',
    ]);
  });

  it('builds on a fresh checkout, with no dist/ yet', async () => {
    rmSync(join(root, 'dist'), { recursive: true, force: true });
    await build();
    expect(readFileSync(bundle(), 'utf8').endsWith(ending)).toBe(true);
  });
});

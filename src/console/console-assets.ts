// The console's built page and assets (scripts/build.mjs writes them to dist/console), read once and served
// from memory: a handful of files, small, immutable between deploys.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Asset {
  body: Buffer;
  contentType: string;
}

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/** The repository's root: the closest folder above this module holding package.json (src/ or dist/ run). */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('no package.json above the console module');
    dir = up;
  }
  return dir;
}

export const consoleBuildDir = () => join(packageRoot(), 'dist', 'console');

/** The built console: `index.html` and `assets/…`, or undefined when it was not built. */
export function loadConsoleAssets(dir = consoleBuildDir()): Map<string, Asset> | undefined {
  if (!existsSync(join(dir, 'index.html'))) return undefined;
  const assets = new Map<string, Asset>();
  const add = (relative: string) => {
    assets.set(relative, {
      body: readFileSync(join(dir, relative)),
      contentType: contentTypes[extname(relative)] ?? 'application/octet-stream',
    });
  };
  add('index.html');
  const assetsDir = join(dir, 'assets');
  if (existsSync(assetsDir)) for (const name of readdirSync(assetsDir)) add(`assets/${name}`);
  return assets;
}

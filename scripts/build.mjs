// `npm start` runs the server from one bundled JavaScript file, built here from src/ in a fraction of a
// second: no TypeScript loader at run time, which would cost each process a second V8 isolate (about
// 60 MB) and the start-up compile. Packages stay in node_modules (only src/ is bundled). Every start builds
// afresh, and processes started together from one checkout build at the same time: each file is written
// aside and renamed into place (atomic-write.mjs), so a starting process never loads a half-written bundle.
// The `pigeon` command (bin/pigeon.js) runs the same bundle, and builds it with `buildServer` when src/ changed.
import { utimesSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { writeAtomically } from './atomic-write.mjs';
import { buildConsole } from './build-console.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const serverBundle = join(root, 'dist', 'main.js');

/**
 * Bundles src/main.ts into dist/main.js (and its source map). The bundle is dated when the build began, not
 * when it ended, so that a source saved during the build still counts as newer than the bundle.
 */
export async function buildServer() {
  const startedAt = new Date();
  const { outputFiles } = await build({
    entryPoints: [join(root, 'src', 'main.ts')],
    outfile: serverBundle,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: true,
    logLevel: 'warning',
    write: false,
  });
  writeAtomically(outputFiles, serverBundle);
  utimesSync(serverBundle, startedAt, startedAt);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildServer();
  // The web console's page and assets, served by the API at /console.
  await buildConsole();
}

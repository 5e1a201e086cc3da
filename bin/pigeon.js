#!/usr/bin/env node
// The package's command. It runs the bundle `npm start` runs (dist/main.js), which starts in about half a
// second where TypeScript through tsx took several: the bundle is built first when it is missing or older than
// a file of src/ or the last install (scripts/build.mjs, each file written aside and renamed into place, so
// commands started together never load half a bundle), and `serve` builds the web console as well when
// console/ changed. Only when the bundle cannot be built (no esbuild, dist/ not writable by this user) does it
// run src/main.ts through tsx.
import { readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bundle = join(root, 'dist', 'main.js');

/** When `path` last changed (ms), or -1 when it does not exist. */
function changedAt(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return -1;
  }
}

/** The latest change under `dir`: its files, and its folders (a file removed or renamed changes its folder). */
function latestChangeUnder(dir) {
  let latest = changedAt(dir);
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return latest;
  }
  for (const entry of entries) {
    if (entry.name === 'node_modules') continue;
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? latestChangeUnder(path) : changedAt(path));
  }
  return latest;
}

/** Builds what is missing or stale; false when the bundle is still not there to run. */
async function bundleReady(serving) {
  // The bundle holds some packages too (scripts/build.mjs): an install that changed node_modules rebuilds it.
  const installed = Math.max(
    changedAt(join(root, 'package.json')),
    changedAt(join(root, 'node_modules', '.package-lock.json')),
  );
  const serverStale = changedAt(bundle) < Math.max(latestChangeUnder(join(root, 'src')), installed);
  const consolePage = join(root, 'dist', 'console', 'index.html');
  const consoleStale = serving && changedAt(consolePage) < latestChangeUnder(join(root, 'console'));
  if (!serverStale && !consoleStale) return true;
  try {
    if (serverStale) await (await import('../scripts/build.mjs')).buildServer();
    if (consoleStale) await (await import('../scripts/build-console.mjs')).buildConsole();
    return true;
  } catch (error) {
    process.stderr.write(`pigeon: cannot build ${bundle} (${error.message}); running src/ through tsx\n`);
    return false;
  }
}

if (await bundleReady(process.argv[2] === 'serve')) {
  await import(pathToFileURL(bundle).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/main.ts');
}

// Builds the web console (console/) into dist/console: index.html, and assets/app.js and app.css bundled by
// esbuild from the Preact sources, uPlot's stylesheet included. No CDN: everything is served by Pigeon. Each
// file is written aside and renamed into place, the page last (atomic-write.mjs).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { writeAtomically } from './atomic-write.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Writes the console to `outDir` (dist/console by default). */
export async function buildConsole(outDir = join(root, 'dist', 'console')) {
  const { outputFiles } = await build({
    entryPoints: { app: join(root, 'console', 'src', 'main.tsx') },
    outdir: join(outDir, 'assets'),
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome110', 'firefox110', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    sourcemap: true,
    loader: { '.css': 'css' },
    logLevel: 'warning',
    write: false,
  });
  const page = {
    path: join(outDir, 'index.html'),
    contents: readFileSync(join(root, 'console', 'index.html')),
  };
  writeAtomically([...outputFiles, page], page.path);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildConsole();

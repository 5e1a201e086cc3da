// Builds the web console (console/) into dist/console: index.html, and assets/app.js and app.css bundled by
// esbuild from the Preact sources, uPlot's stylesheet included. No CDN: everything is served by Pigeon.
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Writes the console to `outDir` (dist/console by default). */
export async function buildConsole(outDir = join(root, 'dist', 'console')) {
  mkdirSync(join(outDir, 'assets'), { recursive: true });
  await build({
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
  });
  copyFileSync(join(root, 'console', 'index.html'), join(outDir, 'index.html'));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildConsole();

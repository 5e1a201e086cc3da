// `npm start` runs the server from one bundled JavaScript file, built here from src/ in a fraction of a
// second: no TypeScript loader at run time, which would cost each process a second V8 isolate (about
// 60 MB) and the start-up compile. Packages stay in node_modules (only src/ is bundled).
import { build } from 'esbuild';
import { buildConsole } from './build-console.mjs';

await build({
  entryPoints: ['src/main.ts'],
  outfile: 'dist/main.js',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
});

// The web console's page and assets, served by the API at /console.
await buildConsole();

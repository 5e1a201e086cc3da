// `npm start` runs the server from one bundled JavaScript file, built here from src/ in a fraction of a
// second: no TypeScript loader at run time, which would cost each process a second V8 isolate (about
// 60 MB) and the start-up compile. The pure-JavaScript packages of `inlined` are bundled too: loading them file
// by file from node_modules was most of a start (about 0.9 s of CPU for `pigeon --help`, typebox and kysely
// alone 0.45 s), and every `pigeon` command and every process of `serve` pays it. The others stay in
// node_modules: native code (better-sqlite3), files read beside their code at run time (pdfkit's fonts,
// swagger-ui's pages, pino's transports), or packages with dependencies of their own. Every start builds
// afresh, and processes started together from one checkout build at the same time: each file is written
// aside and renamed into place (atomic-write.mjs), so a starting process never loads a half-written bundle.
// The `pigeon` command (bin/pigeon.js) runs the same bundle, and builds it with `buildServer` when src/ or the
// installed packages changed.
import { utimesSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { writeAtomically } from './atomic-write.mjs';
import { buildConsole } from './build-console.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const serverBundle = join(root, 'dist', 'main.js');

/**
 * Packages bundled into dist/main.js: written in plain JavaScript, reading no file of their own at run time,
 * and depending on no other package (so none of their imports is left to resolve from dist/).
 */
export const inlined = [
  'typebox',
  'kysely',
  'nodemailer',
  'undici',
  'libphonenumber-js',
  'luxon',
  'yaml',
  'ua-parser-js',
  'ipaddr.js',
];

/** The package a bare import names: `kysely`, `typebox/value` → `typebox`, `@scope/name/x` → `@scope/name`. */
const packageOf = (path) =>
  path
    .split('/')
    .slice(0, path.startsWith('@') ? 2 : 1)
    .join('/');

/** Bare imports of a package outside `inlined` (and Node's own modules) stay imports, resolved at run time. */
const keepExternal = {
  name: 'keep-external',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) =>
      inlined.includes(packageOf(args.path)) ? undefined : { path: args.path, external: true },
    );
  },
};

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
    plugins: [keepExternal],
    // The CommonJS packages inlined call `require` for Node's modules, which an ES module has not.
    banner: {
      js: "import { createRequire as pigeonRequire } from 'node:module';\nconst require = pigeonRequire(import.meta.url);",
    },
    sourcemap: true,
    // Stack traces name src/ files and lines; the sources' text (the inlined packages' too) would triple the
    // map, which `--enable-source-maps` reads whole at every start.
    sourcesContent: false,
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

// Writes a build's output files so that a process reading them never sees one half-written: each is written to
// a temporary file beside it and renamed into place (a rename replaces the old file at once, and a process that
// opened the old one keeps reading it whole). Builds started together from one checkout (processes started at
// once, each running `npm start`) each rename complete files; the last one wins.
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * Writes esbuild's `outputFiles` (from `write: false`), or any `{ path, contents }`: source maps first, then the
 * other files, and the file named `last` at the end, so that once it is in place what it refers to is too.
 */
export function writeAtomically(files, last) {
  const rank = (f) => (f.path === last ? 2 : f.path.endsWith('.map') ? 0 : 1);
  for (const file of [...files].sort((a, b) => rank(a) - rank(b))) {
    mkdirSync(dirname(file.path), { recursive: true });
    const temporary = join(
      dirname(file.path),
      `.${basename(file.path)}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`,
    );
    try {
      writeFileSync(temporary, file.contents);
      renameSync(temporary, file.path);
    } catch (error) {
      rmSync(temporary, { force: true });
      throw error;
    }
  }
}

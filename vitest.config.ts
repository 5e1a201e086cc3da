import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: files run two at a time; each file gets its own databases.
    maxWorkers: 2,
    // Files share their worker's modules instead of importing the app afresh each (about 5 s per file through
    // the transform: a third of the suite's time). Each file builds its own app, store and servers, and puts
    // back what it changes (timers); src/'s module-level maps are caches of pure answers, or keyed by store.
    isolate: false,
  },
});

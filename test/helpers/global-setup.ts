// Decides once whether the PostgreSQL half of the suite runs, and says so clearly when it does not; builds the
// server bundle (which the `pigeon` command runs) and the console as `npm start` does, and makes sure Chromium
// is there for the console's end-to-end tests.
import pg from 'pg';
import type { TestProject } from 'vitest/node';
// @ts-expect-error: a build script in plain JavaScript, without types.
import { buildServer } from '../../scripts/build.mjs';
// @ts-expect-error: a build script in plain JavaScript, without types.
import { buildConsole } from '../../scripts/build-console.mjs';
import { ensureChromium } from './chromium.ts';

export const defaultPgUrl = 'postgres://postgres@127.0.0.1:5432/test';

export default async function setup(project: TestProject): Promise<void> {
  const url = process.env.PG_TEST_URL ?? defaultPgUrl;
  let available = '';
  if (url !== 'off') {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
    try {
      await client.connect();
      await client.query('select 1');
      available = url;
    } catch (error) {
      console.warn(
        `\n*** PostgreSQL half of the suite SKIPPED: cannot reach ${url} (${(error as Error).message}).` +
          '\n*** Set PG_TEST_URL to a reachable database to run it; only SQLite was tested.\n',
      );
    } finally {
      await client.end().catch(() => {});
    }
  } else {
    console.warn('\n*** PostgreSQL half of the suite SKIPPED: PG_TEST_URL=off; only SQLite was tested.\n');
  }
  project.provide('pgUrl', available);
  await buildServer();
  await buildConsole();
  ensureChromium();
}

declare module 'vitest' {
  export interface ProvidedContext {
    pgUrl: string;
  }
}

// `pigeon config check`: the environment and the connectors file checked as a start would check them, with
// nothing started or opened (no database file appears); every error listed at once, and a non-zero exit.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pigeonWith } from '../helpers/cli.ts';

describe('pigeon config check', () => {
  let dir: string;
  let database: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'pigeon-config-'));
    database = join(dir, 'data', 'never.db');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const check = async (env: NodeJS.ProcessEnv) => {
    const r = await pigeonWith({ DATABASE_URL: database, ...env }, 'config', 'check');
    return {
      ...r,
      lines: r.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line)),
    };
  };

  it('a valid environment and connectors file: one line per check, exit 0, and nothing opened', async () => {
    const file = join(dir, 'connectors.yaml');
    writeFileSync(
      file,
      `connectors:
  - { name: sim, url: simulator }
  - { name: orange, url: "smpp://u:p@127.0.0.1:2775" }
routes:
  - { name: france, match: { prefix: ["33"] }, connectors: [orange] }
  - { name: rest, connectors: [sim] }
`,
    );
    const r = await check({ CONNECTORS_FILE: file, ROLE: 'api' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.lines).toEqual([
      { check: 'environment', ok: true, database: 'sqlite', role: 'api', transport: 'connectors file' },
      { check: 'connectors', ok: true, file, connectors: ['sim', 'orange'], routes: ['france', 'rest'] },
    ]);
    expect(r.stderr).toBe('');
    expect(existsSync(database)).toBe(false);
    expect(existsSync(join(dir, 'data'))).toBe(false);
  });

  it('every invalid variable is listed at once, those checked against each other too; exit 1', async () => {
    const parse = await check({ PORT: 'eighty', LOG_LEVEL: 'loud' });
    expect(parse.code).toBe(1);
    expect(parse.lines[0]).toMatchObject({ check: 'environment', ok: false });
    expect(parse.lines[0].errors).toHaveLength(2);
    expect(parse.lines[0].errors.join('\n')).toMatch(/PORT/);
    expect(parse.lines[0].errors.join('\n')).toMatch(/LOG_LEVEL/);
    expect(parse.lines[1]).toEqual({
      check: 'connectors',
      ok: null,
      skipped: 'the environment above must be valid first',
    });
    expect(parse.stderr).toMatch(/^pigeon: the configuration has 2 errors:\n/);

    // Rules between variables: each one found, not only the first.
    const rules = await check({ TRANSPORT: 'smpp', SHUTDOWN_TIMEOUT: '25h', RETENTION_EVERY: '0s' });
    expect(rules.code).toBe(1);
    expect(rules.lines[0]).toEqual({
      check: 'environment',
      ok: false,
      errors: [
        'SMPP_URL: required when TRANSPORT=smpp (smpp://system_id:password@host:port)',
        'SHUTDOWN_TIMEOUT: must be from 1s to 24h, got 25h',
        'RETENTION_EVERY: must be 1s or more (the time between two retention passes), got 0s',
      ],
    });
    expect(rules.stderr).toContain('SHUTDOWN_TIMEOUT: must be from 1s to 24h, got 25h');
  });

  it('a bad connectors file: each of its errors, with its path in the file; exit 1', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(
      bad,
      JSON.stringify({
        connectors: [
          { name: 'one', url: 'smpp://u:p@127.0.0.1:1', window: 0 },
          { name: 'one', url: 'simulator' },
        ],
        routes: [{ name: 'everything', connectors: ['one', 'absent'] }],
      }),
    );
    const r = await check({ CONNECTORS_FILE: bad });
    expect(r.code).toBe(1);
    expect(r.lines[0]).toMatchObject({ check: 'environment', ok: true });
    expect(r.lines[1]).toEqual({
      check: 'connectors',
      ok: false,
      errors: expect.arrayContaining([
        'connectors[0].window: must be >= 1',
        'connectors[1].name: duplicate name "one" (already connectors[0])',
        'routes[0].connectors[1]: unknown connector "absent"',
      ]),
    });
    const missing = await check({ CONNECTORS_FILE: join(dir, 'nowhere.yaml') });
    expect(missing.code).toBe(1);
    expect(missing.lines[1].errors[0]).toMatch(/^CONNECTORS_FILE: cannot read .*nowhere\.yaml \(ENOENT\)$/);
    expect(existsSync(database)).toBe(false);
  });
});

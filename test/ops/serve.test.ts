// `pigeon serve` as a user runs it: a real process, real ports, a clean stop on SIGTERM.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../helpers/cli.ts';

const bin = join(import.meta.dirname, '..', '..', 'bin', 'pigeon.js');

/** Resolves with the first log line carrying `msg`, or rejects if the process exits first. */
function waitForLog(child: ChildProcess, msg: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      try {
        const entry = JSON.parse(line) as Record<string, unknown>;
        if (entry.msg === msg) resolve(entry);
      } catch {
        // Not a log line.
      }
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code} before "${msg}"`)));
  });
}

describe('pigeon serve', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pigeon-serve-'));
  const env = {
    ...process.env,
    DATABASE_URL: join(dir, 'pigeon.db'),
    PORT: '0',
    LINK_PORT: '0',
    LOG_LEVEL: 'info',
  };
  let server: ChildProcess;
  let apiUrl: string;

  beforeAll(async () => {
    server = spawn(process.execPath, [bin, 'serve'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    apiUrl = String((await waitForLog(server, 'API listening')).url);
  });

  afterAll(() => {
    if (server.exitCode === null) server.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the API on its port, to an account made by the CLI while it runs', async () => {
    const token = await createAccount(env, 'serve@example.com', 7);
    const response = await fetch(`${apiUrl}/credits`, { headers: { Authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      status: 1,
      message: 'OK',
      credits: 7,
      postpaid: '0',
      unlimited: '0',
    });
    const xml = await fetch(`${apiUrl}/credits`, {
      headers: { Authorization: token, Accept: 'application/xml' },
    });
    expect(await xml.text()).toContain('<credits>7</credits>');
  });

  it('stops cleanly on SIGTERM', async () => {
    const exited = new Promise<number | null>((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});

// A click on a short link reaches the account's CLICKER webhook, through the real server process: the API
// stores the campaign, the link server records the click and its event, the dispatcher posts it.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, pigeon } from '../helpers/cli.ts';
import { waitFor } from '../helpers/wait.ts';
import { WebhookReceiver } from '../helpers/webhook-receiver.ts';

const bin = join(import.meta.dirname, '..', '..', 'bin', 'pigeon.js');

/** A port free right now: the link server's public base URL must name it before the server starts. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('click to CLICKER webhook', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pigeon-clicker-'));
  let env: NodeJS.ProcessEnv;
  let server: ChildProcess;
  let apiUrl: string;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await new WebhookReceiver().listen();
    const linkPort = await freePort();
    env = {
      ...process.env,
      DATABASE_URL: join(dir, 'pigeon.db'),
      PORT: '0',
      LINK_PORT: String(linkPort),
      LINK_BASE_URL: `http://127.0.0.1:${linkPort}`,
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WORKER_POLL_MS: '20',
      LOG_LEVEL: 'info',
    };
    server = spawn(process.execPath, [bin, 'serve'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    apiUrl = await new Promise<string>((resolve, reject) => {
      createInterface({ input: server.stdout! }).on('line', (line) => {
        try {
          const entry = JSON.parse(line) as { msg?: string; url?: string };
          if (entry.msg === 'API listening' && entry.url) resolve(entry.url);
        } catch {
          // Not a log line.
        }
      });
      server.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
    });
  });

  afterAll(async () => {
    if (server.exitCode === null) server.kill('SIGKILL');
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a browser click is posted to the CLICKER webhook with the recipient and the device', async () => {
    const token = await createAccount(env, 'click@example.com', 10);
    const api = (path: string, body: unknown) =>
      fetch(`${apiUrl}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((r) => r.json() as Promise<Record<string, unknown>>);
    const hook = await api('/webhook', { webhook: { type: 'CLICKER', url: receiver.url('/clicks') } });
    expect(hook.status).toBe(1);
    const sent = await api('/send', {
      sms: {
        message: { text: 'See <-short->', pushtype: 'alert', links: ['https://shop.example/x'] },
        recipients: { gsm: [{ value: '33612345699', gsmsmsid: 'click-1' }] },
      },
    });
    expect(sent.status).toBe(1);
    const lines = await pigeon(['messages', String(sent.ticket)], env);
    const shortUrl = (JSON.parse(lines.trim()) as { text: string }).text.match(/(http\S+)$/)![1];
    const click = await fetch(shortUrl, {
      redirect: 'manual',
      headers: {
        'user-agent':
          'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/126.0 Mobile Safari/537.36',
      },
    });
    expect(click.status).toBe(302);
    const [delivery] = await waitFor(
      () => receiver.requests.length > 0 && receiver.requests,
      'the CLICKER delivery',
      20_000,
    );
    expect(delivery.path).toBe('/clicks');
    expect(JSON.parse(delivery.body)).toMatchObject({
      campaign_id: String(sent.ticket),
      gsmsid: 'click-1',
      long_url: 'https://shop.example/x',
      short_url: shortUrl,
      model: 'Pixel 8',
      clicks_on_link: 1,
    });
  }, 60_000);
});

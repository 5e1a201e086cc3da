// The two gateways of the pipeline bench, each started fresh for a round and stopped after it:
//   - Pigeon exactly as a user runs it: `npm start` in the checkout, configured by its environment (a fresh
//     SQLite file, or a fresh PostgreSQL schema), with an account made by `npx pigeon account create` and a
//     DLR webhook registered through POST /webhook;
//   - Kannel 1.4.5 (Debian's bearerbox and smsbox) on a config written from kannel.conf.tmpl.
// Both bind 4 transceivers with a window of 100 to the bench's SMSC and call back the bench's receiver.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, type Group, portOpen, spawnGroup, waitFor } from './processes.ts';

export interface Gateway {
  name: 'pigeon' | 'kannel';
  /** Leaders of the gateway's process groups: their whole trees are the gateway. */
  roots: number[];
  /** Where the load sends. */
  url: string;
  /** Pigeon's API token. */
  token?: string;
  dir: string;
  stop(): Promise<void>;
  /** Starts the round: what the gateway logged before (its start-up) is not the round's. */
  markLogs(): void;
  /** Warnings and errors the gateway logged since markLogs(), summed up (empty when it logged none). */
  problems(): string;
}

/** The gateway's log files, read from where they stood when the round started. */
class Logs {
  private readonly offsets = new Map<string, number>();

  constructor(private readonly files: string[]) {}

  mark(): void {
    for (const file of this.files) this.offsets.set(file, this.read(file).length);
  }

  /** The lines written to `file` since mark(). */
  since(file: string): string[] {
    return this.read(file)
      .subarray(this.offsets.get(file) ?? 0)
      .toString('utf8')
      .split('\n')
      .filter((line) => line.trim());
  }

  private read(file: string): Buffer {
    try {
      return readFileSync(file);
    } catch {
      return Buffer.alloc(0);
    }
  }
}

export interface GatewayOptions {
  /** The checkout that is benchmarked (Pigeon). */
  repo: string;
  /** Where the gateway's temp dir goes. */
  runDir: string;
  smscPort: number;
  receiverPort: number;
  binds: number;
  window: number;
  /** SMPP binds up at the SMSC right now. */
  boundBinds: () => Promise<number>;
  /** Extra environment for Pigeon (BENCH_PIPELINE_PIGEON_ENV), "VAR=value ..." already split. */
  pigeonEnv?: Record<string, string>;
}

const run = promisify(execFile);

/**
 * Pigeon on a fresh SQLite file in its temp dir, or on `database` (PostgreSQL: a URL naming a fresh schema,
 * and the environment its connections need, such as their application name).
 */
export async function startPigeon(
  options: GatewayOptions,
  database?: { url: string; env: Record<string, string> },
): Promise<Gateway> {
  const dir = mkdtempSync(join(options.runDir, 'pigeon-'));
  const [port, linkPort] = [await freePort(), await freePort()];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: database?.url ?? join(dir, 'pigeon.db'),
    ...database?.env,
    TRANSPORT: 'smpp',
    SMPP_URL: `smpp://pigeon:secret@127.0.0.1:${options.smscPort}`,
    SMPP_BINDS: String(options.binds),
    SMPP_WINDOW: String(options.window),
    SMPP_TPS: '0',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    PORT: String(port),
    LINK_HOST: '127.0.0.1',
    LINK_PORT: String(linkPort),
    LINK_BASE_URL: `http://127.0.0.1:${linkPort}`,
    ...options.pigeonEnv,
  };
  const created = await run(
    'npx',
    [
      '--no-install',
      'pigeon',
      'account',
      'create',
      '--email',
      'bench@example.com',
      '--password',
      'bench password',
      '--credits',
      '1000000000',
    ],
    { cwd: options.repo, env, timeout: 60_000 },
  );
  const { token } = JSON.parse(created.stdout) as { token: string };
  const log = join(dir, 'pigeon.log');
  const logs = new Logs([log]);
  const group = spawnGroup('pigeon', 'npm', ['start'], { cwd: options.repo, env, logFile: log });
  const url = `http://127.0.0.1:${port}`;
  const gateway: Gateway = {
    name: 'pigeon',
    roots: [group.pid],
    url,
    token,
    dir,
    stop: () => group.stop(),
    markLogs: () => logs.mark(),
    problems: () => pigeonProblems(logs.since(log)),
  };
  try {
    const alive = () => group.alive;
    await waitFor('Pigeon listening', () => portOpen(port), { timeoutMs: 60_000, alive });
    await waitFor(
      `Pigeon's ${options.binds} binds`,
      async () => (await options.boundBinds()) >= options.binds,
      {
        timeoutMs: 30_000,
        alive,
      },
    );
    const response = await fetch(`${url}/webhook`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        webhook: { type: 'DLR', url: `http://127.0.0.1:${options.receiverPort}/dlr` },
      }),
      signal: AbortSignal.timeout(10_000),
    });
    const answer = (await response.json()) as { status: number; details?: string };
    if (answer.status !== 1) throw new Error(`webhook not registered: ${JSON.stringify(answer)}`);
  } catch (error) {
    await group.stop();
    throw new Error(`Pigeon did not start (log: ${log}): ${(error as Error).message}`);
  }
  return gateway;
}

/** Pigeon logs JSON lines (pino): those at warn (40) or above. npm's own lines are not Pigeon's. */
function pigeonProblems(lines: string[]): string {
  const problems = lines.filter((line) => {
    if (!line.startsWith('{')) return false;
    try {
      return (JSON.parse(line) as { level?: number }).level! >= 40;
    } catch {
      return false;
    }
  });
  const other = lines.filter((line) => !line.startsWith('{') && !/^(> |npm warn )/.test(line));
  const parts: string[] = [];
  if (problems.length > 0) {
    const first = JSON.parse(problems[0]) as { msg?: string; err?: { message?: string } };
    parts.push(
      `${problems.length} warn/error lines, first: ${first.msg ?? ''} ${first.err?.message ?? ''}`.trim(),
    );
  }
  if (other.length > 0) parts.push(`${other.length} other lines, first: ${other[0].slice(0, 200)}`);
  return parts.join('; ');
}

/** Kannel's version as bearerbox states it, or undefined when Kannel is not installed. */
export function kannelVersion(): string | undefined {
  try {
    const out = execFileSync('bearerbox', ['--version'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString();
    return /version `([^']+)'/.exec(out)?.[1] ?? 'unknown version';
  } catch {
    return undefined;
  }
}

export async function startKannel(options: GatewayOptions): Promise<Gateway> {
  const dir = mkdtempSync(join(options.runDir, 'kannel-'));
  const ports = {
    ADMIN_PORT: await freePort(),
    SMSBOX_PORT: await freePort(),
    SENDSMS_PORT: await freePort(),
  };
  const fields: Record<string, string | number> = {
    ...ports,
    DIR: dir,
    SMSC_PORT: options.smscPort,
    RECEIVER_PORT: options.receiverPort,
    BINDS: options.binds,
    WINDOW: options.window,
  };
  const template = readFileSync(join(import.meta.dirname, 'kannel.conf.tmpl'), 'utf8');
  const conf = join(dir, 'kannel.conf');
  writeFileSync(
    conf,
    template.replace(/@([A-Z_]+)@/g, (_, name: string) => {
      if (!(name in fields)) throw new Error(`kannel.conf.tmpl: no value for @${name}@`);
      return String(fields[name]);
    }),
  );
  const groups: Group[] = [];
  const stop = async () => {
    // smsbox first: without bearerbox it would only try to reconnect.
    for (const group of [...groups].reverse()) await group.stop();
  };
  try {
    // -v 2: warnings and worse on the console too (its default is a debug line per step).
    const bearerbox = spawnGroup('bearerbox', 'bearerbox', ['-v', '2', conf], {
      logFile: join(dir, 'bearerbox.out'),
    });
    groups.push(bearerbox);
    await waitFor('bearerbox listening', () => portOpen(ports.SMSBOX_PORT), {
      timeoutMs: 20_000,
      alive: () => bearerbox.alive,
    });
    const smsbox = spawnGroup('smsbox', 'smsbox', ['-v', '2', conf], { logFile: join(dir, 'smsbox.out') });
    groups.push(smsbox);
    await waitFor('smsbox listening', () => portOpen(ports.SENDSMS_PORT), {
      timeoutMs: 20_000,
      alive: () => smsbox.alive,
    });
    const status = `http://127.0.0.1:${ports.ADMIN_PORT}/status.txt?password=bench`;
    await waitFor(
      `Kannel's ${options.binds} binds and its smsbox`,
      async () => {
        if ((await options.boundBinds()) < options.binds) return false;
        const text = await (await fetch(status, { signal: AbortSignal.timeout(5_000) })).text();
        // "smsbox:(none), IP 127.0.0.1 (0 queued), (on-line 0d 0h 0m 2s)" once smsbox is connected.
        return /smsbox:.*\(on-line/.test(text);
      },
      { timeoutMs: 30_000, alive: () => bearerbox.alive && smsbox.alive },
    );
  } catch (error) {
    await stop();
    throw new Error(`Kannel did not start (logs in ${dir}): ${(error as Error).message}`);
  }
  const logs = new Logs(['bearerbox', 'smsbox'].map((box) => join(dir, `${box}.log`)));
  return {
    name: 'kannel',
    roots: groups.map((group) => group.pid),
    url: `http://127.0.0.1:${ports.SENDSMS_PORT}`,
    dir,
    stop,
    markLogs: () => logs.mark(),
    problems: () => kannelProblems(dir, logs),
  };
}

function kannelProblems(dir: string, logs: Logs): string {
  const parts: string[] = [];
  for (const box of ['bearerbox', 'smsbox']) {
    // wrk resets its connections when it stops; smsbox logs each reset as two ERROR lines, which are the
    // load generator's doing, not Kannel's.
    const lines = logs
      .since(join(dir, `${box}.log`))
      .filter((line) => / (ERROR|PANIC|WARNING): /.test(line))
      .filter((line) => !/Error reading from fd \d+:$|System error 104: Connection reset by peer/.test(line));
    if (lines.length > 0)
      parts.push(`${box}: ${lines.length} warning/error lines, first: ${lines[0].slice(0, 200)}`);
  }
  return parts.join('; ');
}

// Pigeon nodes as real processes: `pigeon serve` with a ROLE and an environment on a DATABASE_URL, as an
// operator starts them on separate machines. Each is started on free ports (PORT, LINK_PORT and METRICS_PORT
// are 0 unless given: the OS picks, and the process says where in its log), waited for until its /ready
// answers 200, and then killed with SIGKILL or stopped with a signal. Its log lines (JSON) are kept.
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { pigeonBin } from './cli.ts';
import { waitFor } from './wait.ts';

export type NodeRole = 'all' | 'api' | 'worker' | 'delivery' | 'webhooks';

export interface NodeLogLine {
  level?: number;
  msg?: string;
  url?: string;
  apiUrl?: string;
  metricsUrl?: string;
  [key: string]: unknown;
}

export interface PigeonNode {
  role: NodeRole;
  process: ChildProcess;
  pid: number;
  /** The API's address (ROLE api or all). */
  apiUrl?: string;
  /** The short-link server's address (ROLE api or all). */
  linkUrl?: string;
  /** Where its /health, /ready and /metrics answer: the API's port, or METRICS_PORT's for a worker. */
  opsUrl: string;
  /** Its log, one parsed JSON line each (lines that are not JSON are skipped). */
  logs: NodeLogLine[];
  /** Resolves when the process has exited, with its code and signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  alive(): boolean;
  /** SIGKILL: no clean-up at all, as a crash or a lost machine. Resolves once it has exited. */
  kill(): Promise<void>;
  /** Sends `signal` (SIGTERM by default) and resolves with the exit code once it has exited. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Resolves with the first log line `match` holds for, waiting up to `timeoutMs`; throws if it exits first. */
  waitForLog(match: (line: NodeLogLine) => boolean, what: string, timeoutMs?: number): Promise<NodeLogLine>;
}

export interface StartNodeOptions {
  role: NodeRole;
  databaseUrl: string;
  /** More environment, over the defaults below (and over this process's environment). */
  env?: Record<string, string>;
  /** How long to wait for /ready (a first start migrates the database). */
  readyTimeoutMs?: number;
}

/** Starts `pigeon serve` with `role` on `databaseUrl` and resolves once its /ready answers 200. */
export async function startNode(options: StartNodeOptions): Promise<PigeonNode> {
  const { role, databaseUrl } = options;
  const servesApi = role === 'api' || role === 'all';
  // ROLE=all is a supervisor, unless PROCESSES=one: it says 'Pigeon ready' once its processes serve.
  const supervised = role === 'all' && options.env?.PROCESSES !== 'one';
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    ROLE: role,
    PORT: '0',
    LINK_PORT: '0',
    // A worker has no other port to answer /ready on.
    ...(servesApi ? {} : { METRICS_PORT: '0' }),
    // Its URLs come from its info lines.
    LOG_LEVEL: 'info',
    ...options.env,
  };
  const child = spawn(process.execPath, [pigeonBin, 'serve'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const logs: NodeLogLine[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    try {
      logs.push(JSON.parse(line) as NodeLogLine);
    } catch {
      // Not a log line.
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const alive = () => child.exitCode === null && child.signalCode === null;
  const found = (msg: string) => logs.find((l) => l.msg === msg);
  try {
    const urls = await waitFor(
      () => {
        if (!alive()) throw new Error(`the ${role} process exited before it served (code ${child.exitCode})`);
        const supervisor = found('Pigeon ready');
        if (supervisor)
          return {
            apiUrl: supervisor.apiUrl,
            linkUrl: supervisor.linkUrl as string | undefined,
            opsUrl: supervisor.metricsUrl ?? supervisor.apiUrl,
          };
        const api = found('API listening')?.url;
        const link = found('link server listening')?.url;
        const metrics = found('health and metrics listening')?.url;
        const opsUrl = metrics ?? api;
        if (!opsUrl || (servesApi && !(api && link)) || supervised) return undefined;
        return { apiUrl: api, linkUrl: link, opsUrl };
      },
      `the ${role} process to listen`,
      options.readyTimeoutMs ?? 60_000,
    );
    const opsUrl = urls.opsUrl!;
    await waitFor(
      async () => {
        if (!alive()) throw new Error(`the ${role} process exited before it was ready`);
        const response = await fetch(`${opsUrl}/ready`).catch(() => undefined);
        await response?.body?.cancel();
        return response?.status === 200;
      },
      `the ${role} process to be ready`,
      options.readyTimeoutMs ?? 60_000,
    );
    return {
      role,
      process: child,
      pid: child.pid!,
      apiUrl: urls.apiUrl,
      linkUrl: urls.linkUrl,
      opsUrl,
      logs,
      exited,
      alive,
      async kill() {
        if (alive()) child.kill('SIGKILL');
        await exited;
      },
      async stop(signal = 'SIGTERM') {
        if (alive()) child.kill(signal);
        return (await exited).code;
      },
      waitForLog: (match, what, timeoutMs = 30_000) =>
        waitFor(
          () => {
            if (!alive())
              throw new Error(`the ${role} process exited (code ${child.exitCode}) before ${what}`);
            return logs.find(match);
          },
          what,
          timeoutMs,
        ),
    };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}

/** Nodes started together, all killed at the end of a test (`afterEach(() => nodes.killAll())`). */
export class NodeGroup {
  readonly nodes: PigeonNode[] = [];

  constructor(private readonly defaults: Omit<StartNodeOptions, 'role'>) {}

  async start(role: NodeRole, env: Record<string, string> = {}): Promise<PigeonNode> {
    const node = await startNode({ ...this.defaults, role, env: { ...this.defaults.env, ...env } });
    this.nodes.push(node);
    return node;
  }

  /** Starts one node per role given, side by side. */
  startAll(roles: NodeRole[], env: Record<string, string> = {}): Promise<PigeonNode[]> {
    return Promise.all(roles.map((role) => this.start(role, env)));
  }

  async killAll(): Promise<void> {
    await Promise.all(this.nodes.splice(0).map((node) => node.kill()));
  }
}

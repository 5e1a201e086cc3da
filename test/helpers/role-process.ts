// `pigeon serve` as separate processes, one ROLE each, as on separate machines sharing one database: started
// with their environment, their JSON log lines kept, killed with any signal, their exit watched.
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { pigeonBin } from './cli.ts';
import { waitFor } from './wait.ts';

export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

export interface RoleProcess {
  role: string;
  child: ChildProcess;
  /** Every JSON log line written so far. */
  lines: LogLine[];
  /** The API's URL (ROLE api or all), once it listens. */
  apiUrl?: string;
  /** Whether it has exited (by itself or killed). */
  exited(): boolean;
  /** Sends `signal` and resolves once the process is gone. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Resolves with the first log line for which `match` holds, waiting up to `timeoutMs`. */
  waitForLine(match: (line: LogLine) => boolean, what: string, timeoutMs?: number): Promise<LogLine>;
}

/**
 * Starts `pigeon serve` with ROLE=`role` and `env` on top of this process's environment (PORT and LINK_PORT 0,
 * so several run side by side). Resolves once it serves: its API listens (api, all), or it logged `readyMsg`.
 */
export async function startRole(
  role: 'api' | 'delivery' | 'webhooks' | 'worker' | 'all',
  env: Record<string, string>,
  options: { readyMsg?: string; timeoutMs?: number } = {},
): Promise<RoleProcess> {
  const child = spawn(process.execPath, [pigeonBin, 'serve'], {
    env: { ...process.env, PORT: '0', LINK_PORT: '0', LOG_LEVEL: 'info', ...env, ROLE: role },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: LogLine[] = [];
  let exitCode: number | null | undefined;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', (code) => {
      exitCode = code;
      resolve();
    }),
  );
  createInterface({ input: child.stdout! }).on('line', (text) => {
    try {
      lines.push(JSON.parse(text) as LogLine);
    } catch {
      // Not a log line.
    }
  });
  const proc: RoleProcess = {
    role,
    child,
    lines,
    exited: () => exitCode !== undefined,
    async kill(signal = 'SIGKILL') {
      if (exitCode === undefined) child.kill(signal);
      await exit;
    },
    waitForLine: (match, what, timeoutMs = 30_000) =>
      waitFor(
        () => {
          if (exitCode !== undefined) throw new Error(`${role} exited with ${exitCode} before ${what}`);
          return lines.find(match);
        },
        what,
        timeoutMs,
      ),
  };
  const timeoutMs = options.timeoutMs ?? 60_000;
  try {
    if (role === 'api' || role === 'all') {
      const listening = await proc.waitForLine(
        (l) => l.msg === 'API listening',
        'the API listening',
        timeoutMs,
      );
      proc.apiUrl = String(listening.url);
    } else if (options.readyMsg) {
      const msg = options.readyMsg;
      await proc.waitForLine((l) => l.msg.includes(msg), msg, timeoutMs);
    }
  } catch (error) {
    await proc.kill();
    throw error;
  }
  return proc;
}

// Processes of the pipeline bench. Each one is started as the leader of its own process group, so that it
// and everything it starts (npm → sh → tsx → node for Pigeon) are signalled together, by the group's id,
// and stopped even when the bench fails half-way. Nothing is ever stopped by name.
import { type ChildProcess, fork, type SpawnOptions, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { connect } from 'node:net';
import type { IpcAnswer, IpcRequest, Ready } from './ipc.ts';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Resolves after `ms`, for a race against what is awaited: it does not keep the bench alive by itself. */
export const timeLimit = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** Every group started and not yet stopped: what the emergency stop kills. */
const running = new Set<Group>();

/** Is any process of the group `pgid` still there? */
function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

export class Group {
  /** Resolves with the leader's exit code (or null after a signal) once it has exited. */
  readonly exited: Promise<number | null>;
  exitCode: number | null | undefined = undefined;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    if (child.pid === undefined) throw new Error(`${name} did not start`);
    running.add(this);
    this.exited = new Promise((resolve) => {
      child.once('exit', (code) => {
        this.exitCode = code;
        resolve(code);
      });
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  get alive(): boolean {
    return this.exitCode === undefined;
  }

  signal(signal: NodeJS.Signals): void {
    try {
      process.kill(-this.pid, signal);
    } catch {
      // The group is already gone.
    }
  }

  /** SIGTERM to the whole group, then SIGKILL to what is left after `graceMs`. */
  async stop(graceMs = 15_000): Promise<void> {
    this.signal('SIGTERM');
    const deadline = Date.now() + graceMs;
    while (groupExists(this.pid) && Date.now() < deadline) await sleep(100);
    if (groupExists(this.pid)) {
      console.log(`  ${this.name} (group ${this.pid}) still running ${graceMs} ms after SIGTERM: SIGKILL`);
      this.signal('SIGKILL');
      const killDeadline = Date.now() + 5_000;
      while (groupExists(this.pid) && Date.now() < killDeadline) await sleep(100);
    }
    running.delete(this);
  }
}

/** Kills every group still running, at once: for a bench that is being interrupted or has crashed. */
export function killAll(): void {
  for (const group of running) group.signal('SIGKILL');
  running.clear();
}

/** Starts `command` as a new process group, its output appended to `logFile` (or inherited). */
export function spawnGroup(
  name: string,
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; logFile?: string; stdout?: 'pipe' } = {},
): Group {
  const fd = options.logFile ? openSync(options.logFile, 'a') : undefined;
  const spawnOptions: SpawnOptions = {
    cwd: options.cwd,
    env: options.env ?? process.env,
    detached: true,
    stdio: ['ignore', options.stdout ?? fd ?? 'inherit', fd ?? 'inherit'],
  };
  try {
    return new Group(name, spawn(command, args, spawnOptions));
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * A helper process written in TypeScript (run through tsx), asked for its counters over IPC. It says where
 * it listens once ready.
 */
export class Helper extends Group {
  private nextId = 1;
  private readonly waiting = new Map<number, (answer: IpcAnswer) => void>();
  port = 0;

  constructor(name: string, child: ChildProcess) {
    super(name, child);
    child.on('message', (message: IpcAnswer | Ready) => {
      if ('id' in message) {
        this.waiting.get(message.id)?.(message);
        this.waiting.delete(message.id);
      }
    });
  }

  static async start(name: string, modulePath: string, cwd: string, args: string[] = []): Promise<Helper> {
    const child = fork(modulePath, args, {
      cwd,
      execArgv: ['--import', 'tsx'],
      detached: true,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const helper = new Helper(name, child);
    const ready = new Promise<Ready>((resolve) => {
      child.on('message', (message: Ready) => {
        if ('ready' in message) resolve(message);
      });
    });
    const outcome = await Promise.race([
      ready,
      helper.exited.then((code) => new Error(`${name} exited with ${code} before it was ready`)),
      timeLimit(30_000).then(() => new Error(`${name} not ready after 30 s`)),
    ]);
    if (outcome instanceof Error) {
      await helper.stop(2_000);
      throw outcome;
    }
    helper.port = outcome.port;
    return helper;
  }

  /** Sends a command and waits (bounded) for its answer. */
  async ask<T>(command: string, timeoutMs = 10_000): Promise<T> {
    const id = this.nextId++;
    const answer = new Promise<IpcAnswer>((resolve) => this.waiting.set(id, resolve));
    const request: IpcRequest = { id, command };
    this.child.send(request);
    const outcome = await Promise.race([answer, timeLimit(timeoutMs).then(() => undefined)]);
    if (!outcome) {
      this.waiting.delete(id);
      throw new Error(`${this.name} did not answer ${command} within ${timeoutMs} ms`);
    }
    if (outcome.error) throw new Error(`${this.name}: ${outcome.error}`);
    return outcome.result as T;
  }

  override async stop(graceMs = 5_000): Promise<void> {
    if (this.child.connected) this.child.disconnect();
    await super.stop(graceMs);
  }
}

/** A port free on 127.0.0.1 right now (the kernel's choice), for a process that cannot listen on port 0. */
export { freePort } from '../../test/helpers/free-port.ts';

/** Does something accept TCP connections on 127.0.0.1:`port`? */
export function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.setTimeout(1_000, () => done(false));
  });
}

/**
 * Polls `check` until it holds, for at most `timeoutMs`; throws naming `what` when it never does, or at once
 * when `alive` says the process being waited for has exited.
 */
export async function waitFor(
  what: string,
  check: () => Promise<boolean> | boolean,
  options: { timeoutMs: number; intervalMs?: number; alive?: () => boolean },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    if (await check()) return;
    if (options.alive && !options.alive()) throw new Error(`${what}: the process exited`);
    if (Date.now() > deadline) throw new Error(`${what}: not after ${options.timeoutMs / 1000} s`);
    await sleep(options.intervalMs ?? 200);
  }
}

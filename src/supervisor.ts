// `pigeon serve` with ROLE=all: one process per role, so the API, the delivery worker and the webhook
// dispatcher each have a core's event loop instead of sharing one. The supervisor applies the migrations,
// starts the three, passes nudges between them, restarts one that dies (its leased work comes back when the
// lease expires, as after any crash), and on SIGTERM or SIGINT stops them all and waits for them. It serves
// nothing itself. The processes share the database: SQLite's WAL file (one writer at a time, short
// transactions, readers never blocked) or PostgreSQL.
import { type ChildProcess, fork } from 'node:child_process';
import type { Logger } from 'pino';
import { type Config, durationMs } from './config.ts';
import { createOpsRelay, isOpsAnswer, isOpsAsk, type RelayPeer } from './ops/supervision.ts';
import { isListenMessage, isNudgeMessage, type NudgeMessage, type NudgeTopic } from './shared/nudges.ts';
import { openStore } from './store/db.ts';
import { migrate } from './store/migrate.ts';

/** The roles the supervisor starts, each in its own process. */
export const supervisedRoles = ['api', 'delivery', 'webhooks'] as const;
type SupervisedRole = (typeof supervisedRoles)[number];

/** Set in a supervised process's environment: it then talks to the supervisor over its IPC channel. */
export const supervisedVariable = 'PIGEON_SUPERVISED';

/** What a supervised process tells the supervisor once it serves. */
export interface ReadyMessage {
  pigeon: 'ready';
  apiUrl?: string;
  linkUrl?: string;
  /** Where /health, /ready and /metrics are, when METRICS_PORT gives them a port of their own. */
  metricsUrl?: string;
}

const isReady = (value: unknown): value is ReadyMessage =>
  typeof value === 'object' && value !== null && (value as ReadyMessage).pigeon === 'ready';

/** A restarted process waits this long, doubled at each quick death, up to the maximum. */
const restartBaseMs = 1_000;
const restartMaxMs = 30_000;
/** A process that served this long before it died is restarted at once. */
const healthyAfterMs = 60_000;
/**
 * On stop, how long past SHUTDOWN_TIMEOUT a process is killed: its own deadline (the same SHUTDOWN_TIMEOUT)
 * should make it exit first, naming the steps it was still running; this catches one too stuck to.
 */
const killAfterDeadlineMs = 2_000;

interface Child {
  role: SupervisedRole;
  process?: ChildProcess;
  startedAt: number;
  delayMs: number;
  ready: boolean;
  /** Whether it has served once: one that fails to start the first time stops the server. */
  served: boolean;
  /** The nudge topics its process listens to (told by the process itself once it listens). */
  listens: Set<NudgeTopic>;
}

export async function supervise(config: Config, logger: Logger): Promise<void> {
  // Once, before the processes start: they then find the schema current and none of them migrates.
  const store = await openStore(config.DATABASE_URL, { sqliteSynchronous: config.SQLITE_SYNCHRONOUS });
  try {
    await migrate(store);
  } finally {
    await store.destroy();
  }

  let stopping = false;
  let urls: { apiUrl?: string; linkUrl?: string; metricsUrl?: string } = {};
  const children = supervisedRoles.map(
    (role): Child => ({
      role,
      startedAt: 0,
      delayMs: 0,
      ready: false,
      served: false,
      listens: new Set(),
    }),
  );
  const relayNudge = nudgeRelay();
  // The API process answers /metrics and /ready for all: the relay asks the others for it.
  const relay = createOpsRelay();
  const peers = new Map<Child, RelayPeer>(
    children.map((child) => [
      child,
      {
        role: child.role,
        get running() {
          return child.process?.connected === true;
        },
        get serving() {
          return child.ready;
        },
        send: (message) => child.process?.send(message),
      },
    ]),
  );

  const start = (child: Child) => {
    child.startedAt = Date.now();
    child.ready = false;
    child.listens = new Set();
    const proc = fork(process.argv[1], ['serve'], {
      env: {
        ...process.env,
        ROLE: child.role,
        [supervisedVariable]: '1',
        // Only the API process serves METRICS_PORT; it answers for the others.
        ...(child.role === 'api' ? {} : { METRICS_PORT: '' }),
      },
      execArgv:
        child.role === 'delivery' && config.WORKER_HEAP_MB > 0
          ? [...process.execArgv, `--max-old-space-size=${config.WORKER_HEAP_MB}`]
          : process.execArgv,
      stdio: 'inherit',
    });
    child.process = proc;
    proc.on('message', (message: unknown) => {
      if (isNudgeMessage(message)) {
        for (const other of children)
          if (other !== child && other.listens.has(message.topic)) relayNudge(other, message.topic);
      } else if (isListenMessage(message)) {
        child.listens.add(message.topic);
      } else if (isOpsAsk(message)) {
        void relay.ask(peers.get(child)!, [...peers.values()], message);
      } else if (isOpsAnswer(message)) {
        relay.answered(message);
      } else if (isReady(message)) {
        child.ready = true;
        child.served = true;
        if (message.apiUrl)
          urls = { apiUrl: message.apiUrl, linkUrl: message.linkUrl, metricsUrl: message.metricsUrl };
        if (children.every((c) => c.ready)) {
          logger.info(
            { ...urls, processes: children.map((c) => `${c.role}:${c.process?.pid}`) },
            'Pigeon ready',
          );
        }
      }
    });
    proc.on('exit', (code, signal) => {
      child.process = undefined;
      if (stopping) return;
      if (!child.served) {
        // A port taken, a database that cannot open: restarting would fail the same way.
        logger.error({ role: child.role, code, signal }, 'a Pigeon process failed to start; stopping');
        void shutdown('SIGTERM', 1);
        return;
      }
      const served = Date.now() - child.startedAt;
      child.delayMs =
        served >= healthyAfterMs ? 0 : Math.min(restartMaxMs, Math.max(restartBaseMs, child.delayMs * 2));
      logger.error(
        { role: child.role, code, signal, restartInMs: child.delayMs },
        'a Pigeon process stopped; restarting it',
      );
      setTimeout(() => {
        if (stopping) return;
        relay.restarted(child.role);
        start(child);
      }, child.delayMs);
    });
  };

  for (const child of children) start(child);

  async function shutdown(signal: NodeJS.Signals, exitCode = 0): Promise<void> {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down every Pigeon process');
    const timeoutMs = durationMs(config.SHUTDOWN_TIMEOUT);
    // Roles whose process did not stop cleanly: past its deadline, killed, or failed while stopping.
    const unclean: SupervisedRole[] = [];
    const exits = children.map((child) => {
      const proc = child.process;
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          logger.error(
            { role: child.role, timeoutMs },
            'a Pigeon process did not stop within SHUTDOWN_TIMEOUT; killing it',
          );
          proc.kill('SIGKILL');
        }, timeoutMs + killAfterDeadlineMs);
        proc.once('exit', (code, exitSignal) => {
          clearTimeout(timer);
          // SIGTERM's default action ends a process still starting, before it handles the signal: clean.
          if (code !== 0 && exitSignal !== 'SIGTERM') unclean.push(child.role);
          resolve();
        });
        proc.kill('SIGTERM');
      });
    });
    await Promise.all(exits);
    if (unclean.length > 0) {
      logger.error({ roles: unclean, timeoutMs }, 'Pigeon processes did not stop cleanly; exiting');
      process.exit(1);
    }
    process.exit(exitCode);
  }
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

/**
 * Passes nudges on to the processes that listen to their topic: at most one per process and topic per turn,
 * however many came in during it (one process's nudges come one per turn, but several processes send them).
 */
function nudgeRelay(): (to: Child, topic: NudgeTopic) => void {
  const pending = new Map<Child, Set<NudgeTopic>>();
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    for (const [child, topics] of pending) {
      for (const topic of topics) {
        if (child.process?.connected) child.process.send({ pigeon: 'nudge', topic } satisfies NudgeMessage);
      }
    }
    pending.clear();
  };
  return (to, topic) => {
    const topics = pending.get(to);
    if (topics) topics.add(topic);
    else pending.set(to, new Set([topic]));
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
}

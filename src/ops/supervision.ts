// Metrics and readiness across the processes of one supervisor. The process that answers /metrics or /ready
// (the API's) asks the supervisor over its IPC channel; the supervisor asks every other process it runs, each
// with its own request id, and answers with what came back within `processTimeoutMs`: a process that is not
// running, not yet serving, or too slow is reported as not answering, never waited for. The supervisor adds
// two series of its own: whether each process answered (`pigeon_process_up`) and how often it was restarted.
import type { Readiness } from './readiness.ts';

/** A registry's metrics as prom-client's getMetricsAsJSON gives them (plain data: it crosses IPC). */
export type MetricsJson = {
  name: string;
  help: string;
  type: string;
  aggregator: string;
  values: { value: number; labels: Record<string, string | number>; metricName?: string }[];
}[];

export type OpsQuestion = 'metrics' | 'ready';

/** Asks for metrics or readiness: a process to the supervisor, or the supervisor to a process. */
export interface OpsAsk {
  pigeon: 'ops-ask';
  id: number;
  what: OpsQuestion;
}

/** A process's answer to the supervisor. */
export interface OpsAnswer {
  pigeon: 'ops-answer';
  id: number;
  metrics?: MetricsJson;
  readiness?: Readiness;
}

/** What one other process said, or why it said nothing. */
export interface ProcessReport {
  role: string;
  /** Why there is no answer: not running, starting, or too slow. */
  missing?: string;
  metrics?: MetricsJson;
  readiness?: Readiness;
}

/** The supervisor's answer to the asking process. */
export interface OpsGathered {
  pigeon: 'ops-gathered';
  id: number;
  processes: ProcessReport[];
  /** The supervisor's own series: pigeon_process_up and pigeon_process_restarts_total. */
  metrics: MetricsJson;
}

const hasKind = (value: unknown, kind: string): boolean =>
  typeof value === 'object' && value !== null && (value as { pigeon?: unknown }).pigeon === kind;

export const isOpsAsk = (value: unknown): value is OpsAsk =>
  hasKind(value, 'ops-ask') &&
  typeof (value as OpsAsk).id === 'number' &&
  ((value as OpsAsk).what === 'metrics' || (value as OpsAsk).what === 'ready');

export const isOpsAnswer = (value: unknown): value is OpsAnswer =>
  hasKind(value, 'ops-answer') && typeof (value as OpsAnswer).id === 'number';

const isOpsGathered = (value: unknown): value is OpsGathered =>
  hasKind(value, 'ops-gathered') && Array.isArray((value as OpsGathered).processes);

/** How long the supervisor waits for each process's answer. */
export const processTimeoutMs = 1_000;
/** How long the asking process waits for the supervisor's (which waits for the others first). */
const supervisorTimeoutMs = processTimeoutMs + 500;

/** A supervised process as the relay sees it. */
export interface RelayPeer {
  role: string;
  /** Running and serving (its ready message came): only such a process is asked. */
  serving: boolean;
  running: boolean;
  send(message: OpsAsk | OpsGathered): void;
}

/** The supervisor's side: passes questions on, gathers the answers, counts restarts. */
export function createOpsRelay() {
  let nextId = 1;
  const waiting = new Map<number, (answer: OpsAnswer) => void>();
  const restarts = new Map<string, number>();

  function askOne(peer: RelayPeer, what: OpsQuestion): Promise<ProcessReport> {
    if (!peer.running) return Promise.resolve({ role: peer.role, missing: 'not running (restarting)' });
    if (!peer.serving) return Promise.resolve({ role: peer.role, missing: 'starting' });
    const id = nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        waiting.delete(id);
        resolve({ role: peer.role, missing: `no answer within ${processTimeoutMs} ms` });
      }, processTimeoutMs);
      waiting.set(id, (answer) => {
        clearTimeout(timer);
        waiting.delete(id);
        resolve({ role: peer.role, metrics: answer.metrics, readiness: answer.readiness });
      });
      try {
        peer.send({ pigeon: 'ops-ask', id, what });
      } catch {
        // The channel closed under us: the timer reports it as not answering.
      }
    });
  }

  function ownMetrics(asker: RelayPeer, reports: ProcessReport[], roles: string[]): MetricsJson {
    return [
      {
        name: 'pigeon_process_up',
        help: 'Whether each supervised process answered this scrape in time (1) or not (0: its metrics are missing from it).',
        type: 'gauge',
        aggregator: 'sum',
        values: [
          { value: 1, labels: { role: asker.role } },
          ...reports.map((r) => ({ value: r.missing === undefined ? 1 : 0, labels: { role: r.role } })),
        ],
      },
      {
        name: 'pigeon_process_restarts_total',
        help: 'Times the supervisor started a process again after it died.',
        type: 'counter',
        aggregator: 'sum',
        values: roles.map((role) => ({ value: restarts.get(role) ?? 0, labels: { role } })),
      },
    ];
  }

  return {
    restarted(role: string): void {
      restarts.set(role, (restarts.get(role) ?? 0) + 1);
    },

    /** A process's answer to one of the relay's questions. */
    answered(answer: OpsAnswer): void {
      waiting.get(answer.id)?.(answer);
    },

    /** `asker` asks about every other process in `peers`; the gathered answers go back to it. */
    async ask(asker: RelayPeer, peers: RelayPeer[], question: OpsAsk): Promise<void> {
      const others = peers.filter((peer) => peer !== asker);
      const processes = await Promise.all(others.map((peer) => askOne(peer, question.what)));
      const metrics =
        question.what === 'metrics'
          ? ownMetrics(
              asker,
              processes,
              peers.map((p) => p.role),
            )
          : [];
      if (asker.running) {
        try {
          asker.send({ pigeon: 'ops-gathered', id: question.id, processes, metrics });
        } catch {
          // It died meanwhile: nobody is waiting for this answer.
        }
      }
    },
  };
}

/** A supervised process's side of the channel: answers the supervisor's questions and asks its own. */
export function createSupervisorLink(
  channel: NodeJS.Process,
  answer: { metrics(): Promise<MetricsJson>; readiness(): Promise<Readiness> },
) {
  let nextId = 1;
  const waiting = new Map<number, (gathered: OpsGathered) => void>();
  const send = (message: OpsAsk | OpsAnswer) => {
    if (channel.connected && channel.send) channel.send(message);
  };
  channel.on('message', (message: unknown) => {
    if (isOpsAsk(message)) {
      const reply =
        message.what === 'metrics'
          ? answer.metrics().then((metrics) => ({ metrics }))
          : answer.readiness().then((readiness) => ({ readiness }));
      void reply
        .then((fields) => send({ pigeon: 'ops-answer', id: message.id, ...fields }))
        .catch(() => {
          // No answer: the supervisor reports this process as not answering.
        });
    } else if (isOpsGathered(message)) {
      waiting.get(message.id)?.(message);
    }
  });

  return {
    /** The other processes' answers, through the supervisor; undefined when it does not answer in time. */
    gather(what: OpsQuestion): Promise<OpsGathered | undefined> {
      const id = nextId++;
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          waiting.delete(id);
          resolve(undefined);
        }, supervisorTimeoutMs);
        waiting.set(id, (gathered) => {
          clearTimeout(timer);
          waiting.delete(id);
          resolve(gathered);
        });
        try {
          send({ pigeon: 'ops-ask', id, what });
        } catch {
          // The supervisor is gone: the timer answers undefined, and this process stops on disconnect.
        }
      });
    },
  };
}

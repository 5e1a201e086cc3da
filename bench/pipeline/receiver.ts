// The DLR receiver of the pipeline bench, in its own process: node:http on 127.0.0.1 (port 0) taking both
// gateways' callbacks on /dlr and counting each message once:
//   - Pigeon: POST /dlr, its JSON DLR webhook; the message is its `message_id` (the gsmsmsid the load put
//     in the send, "<send ms>-<thread>-<n>"), the send time its leading digits;
//   - Kannel: GET /dlr?t=<send ms>&type=%d&to=%p, its dlr-url; the message is `to` (one recipient each).
// Latency is the callback's arrival minus the send time, in 1 ms buckets. A message called back twice is a
// duplicate. It answers the orchestrator's `counts`, `stats` (with percentiles) and `reset` over IPC.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerRequests, sayReady } from './ipc.ts';

/** Latencies up to 10 minutes get their own bucket; longer ones share the last. */
const maxLatencyMs = 600_000;
/** Distinct messages remembered at most, to bound memory (far above any round). */
const maxKeys = 5_000_000;

export interface ReceiverCounts {
  callbacks: number;
  distinct: number;
  duplicates: number;
  /** Callbacks naming no message (a gateway bug, or a payload the bench does not understand). */
  withoutKey: number;
  badBodies: number;
  firstMs: number;
  lastMs: number;
}

export interface ReceiverStats extends ReceiverCounts {
  byStatus: Record<string, number>;
  latency: { count: number; p50: number | null; p99: number | null; max: number | null; overLimit: number };
}

let counts: ReceiverCounts;
let byStatus: Record<string, number>;
let seen: Set<string>;
let latencyCount = 0;
let overLimit = 0;
const histogram = new Uint32Array(maxLatencyMs + 1);

function reset(): ReceiverCounts {
  counts = {
    callbacks: 0,
    distinct: 0,
    duplicates: 0,
    withoutKey: 0,
    badBodies: 0,
    firstMs: 0,
    lastMs: 0,
  };
  byStatus = {};
  seen = new Set();
  latencyCount = 0;
  overLimit = 0;
  histogram.fill(0);
  return counts;
}
reset();

function count(arrivedMs: number, key: string, sentMs: number, status: string): void {
  counts.callbacks++;
  if (counts.firstMs === 0) counts.firstMs = arrivedMs;
  counts.lastMs = arrivedMs;
  byStatus[status] = (byStatus[status] ?? 0) + 1;
  if (sentMs > 0) {
    const latency = Math.max(0, arrivedMs - sentMs);
    latencyCount++;
    if (latency > maxLatencyMs) overLimit++;
    histogram[Math.min(latency, maxLatencyMs)]++;
  }
  if (!key) counts.withoutKey++;
  else if (seen.has(key)) counts.duplicates++;
  else if (seen.size < maxKeys) {
    seen.add(key);
    counts.distinct++;
  }
}

function percentile(p: number): number | null {
  if (latencyCount === 0) return null;
  const target = Math.ceil(latencyCount * p);
  let sum = 0;
  for (let ms = 0; ms <= maxLatencyMs; ms++) {
    sum += histogram[ms];
    if (sum >= target) return ms;
  }
  return maxLatencyMs;
}

function stats(): ReceiverStats {
  let max: number | null = null;
  for (let ms = maxLatencyMs; ms >= 0 && latencyCount > 0; ms--) {
    if (histogram[ms] > 0) {
      max = ms;
      break;
    }
  }
  return {
    ...counts,
    byStatus,
    latency: { count: latencyCount, p50: percentile(0.5), p99: percentile(0.99), max, overLimit },
  };
}

const ok = Buffer.from('OK\n');
function answer(res: ServerResponse, status = 200): void {
  res.writeHead(status, { 'content-type': 'text/plain', 'content-length': ok.length });
  res.end(ok);
}

function onWebhook(req: IncomingMessage, res: ServerResponse, arrivedMs: number): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    let body: { message_id?: unknown; status?: unknown } | undefined;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      counts.badBodies++;
    }
    const key = body?.message_id == null ? '' : String(body.message_id);
    const sent = /^\d{12,}/.exec(key);
    count(arrivedMs, key, sent ? Number(sent[0]) : 0, String(body?.status ?? '?'));
    answer(res);
  });
}

const server = createServer((req, res) => {
  const arrivedMs = Date.now();
  const url = req.url ?? '';
  if (!url.startsWith('/dlr')) {
    req.resume();
    answer(res, 404);
    return;
  }
  if (req.method === 'POST') {
    onWebhook(req, res, arrivedMs);
    return;
  }
  const query = new URLSearchParams(url.slice(url.indexOf('?') + 1));
  count(arrivedMs, query.get('to') ?? '', Number(query.get('t') ?? 0), query.get('type') ?? '?');
  answer(res);
});
// Both gateways keep their connections: never close one under them between callbacks.
server.keepAliveTimeout = 120_000;

answerRequests({ counts: () => counts, stats, reset });
server.listen(0, '127.0.0.1', () => sayReady((server.address() as AddressInfo).port));

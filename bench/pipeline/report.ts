// What the pipeline bench records per round, and the summary it prints at the end: medians per gateway,
// Pigeon/Kannel ratios, the verdict per target, and each round's bookkeeping.

export type Kind = 'saturation' | 'bulk' | 'paced' | 'campaign';
export type GatewayName = 'pigeon' | 'kannel';

export interface RoundRecord {
  at: string;
  commit: string;
  kannelVersion?: string;
  gateway: GatewayName;
  kind: Kind;
  rep: number;
  shape: Record<string, number | string>;
  load: {
    sent: number;
    accepted: number;
    rejected: number;
    socketErrors: number;
    /** First send to last answer. */
    seconds: number;
    acceptedPerS: number;
    httpP50Ms?: number;
    httpP99Ms?: number;
    firstRejected?: string;
    /** Campaign: request start to the whole answer. */
    answerMs?: number;
  };
  /** From the first send until the load stopped. */
  duringLoad: { seconds: number; submits: number; callbacks: number; callbacksPerS: number };
  lastCallbackAfterS: number | null;
  /** Callbacks over first send → last callback. */
  callbacksPerS: number | null;
  latencyMs: { p50: number | null; p99: number | null; max: number | null };
  /** What the gateway's processes used. */
  usage: {
    cpuSeconds: number;
    cpuMsPerMessage: number | null;
    cpuPercentOfCore: number;
    peakTreeRssMb: number;
    peakProcessRssMb: number;
    processes: number;
    problems: string;
  };
  /** The bench's own processes, % of one core over the same window. */
  /** The bench's own processes (bench: this orchestrator), % of one core over the same window. */
  harnessCpuPercent: { smsc: number; receiver: number; load: number; bench: number };
  /**
   * busyPercent: % of all cores; otherPercentOfCore: what the box spent beyond the gateway and the bench's
   * processes, in % of one core (other work on a shared box, and kernel time charged to no process).
   */
  box: { busyPercent: number; busyBeforePercent: number; otherPercentOfCore: number };
  /** Load start until the last callback or submit was seen (what CPU and box shares are taken over). */
  measuredSeconds: number;
  bookkeeping: {
    sent: number;
    accepted: number;
    submits: number;
    receiptsSent: number;
    receiptsAnswered: number;
    callbacks: number;
    distinct: number;
    duplicates: number;
    withoutKey: number;
    badBodies: number;
    drained: boolean;
    exact: boolean;
  };
  /**
   * Each second: seconds since the load started, then cumulative submit_sm at the SMSC, callbacks at the
   * receiver, the gateway's CPU seconds and its RSS (MB, all its processes).
   */
  timeline: [number, number, number, number, number][];
}

export function median(values: (number | null | undefined)[]): number | null {
  const sorted = values
    .filter((v): v is number => typeof v === 'number' && Number.isFinite(v))
    .sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

export const fmt = (n: number | null | undefined, digits = 0): string =>
  n === null || n === undefined || !Number.isFinite(n)
    ? '—'
    : n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

export function bookkeepingLine(r: RoundRecord): string {
  const b = r.bookkeeping;
  return (
    `sent ${fmt(b.sent)}, accepted ${fmt(b.accepted)}, submit_sm ${fmt(b.submits)}, receipts ${fmt(b.receiptsSent)} ` +
    `(answered ${fmt(b.receiptsAnswered)}), callbacks ${fmt(b.callbacks)}, distinct ${fmt(b.distinct)}, ` +
    `duplicates ${fmt(b.duplicates)}${b.withoutKey ? `, without message id ${b.withoutKey}` : ''}` +
    `${b.badBodies ? `, unreadable ${b.badBodies}` : ''}${b.drained ? '' : ', NOT DRAINED'}: ` +
    (b.exact ? 'exact' : 'WRONG')
  );
}

export function roundLine(r: RoundRecord): string {
  const g = r.usage;
  const head =
    r.kind === 'campaign'
      ? `answer ${fmt(r.load.answerMs)} ms, ${fmt(r.load.accepted)} sent`
      : `${fmt(r.load.acceptedPerS)} accepted/s (HTTP p50 ${fmt(r.load.httpP50Ms, 1)} / p99 ${fmt(r.load.httpP99Ms, 1)} ms)`;
  return (
    `${head}, ${fmt(r.duringLoad.callbacksPerS)} DLR/s during the load, last DLR after ${fmt(r.lastCallbackAfterS, 1)} s, ` +
    `send→DLR p50 ${fmt(r.latencyMs.p50)} / p99 ${fmt(r.latencyMs.p99)} ms; gateway ${fmt(g.cpuMsPerMessage, 3)} ms CPU/msg ` +
    `(${fmt(g.cpuPercentOfCore)} % of a core), peak RSS ${fmt(g.peakTreeRssMb)} MB tree / ${fmt(g.peakProcessRssMb)} MB ` +
    `largest process (${g.processes} processes); SMSC ${fmt(r.harnessCpuPercent.smsc)} %, receiver ` +
    `${fmt(r.harnessCpuPercent.receiver)} %, load ${fmt(r.harnessCpuPercent.load)} %, bench ` +
    `${fmt(r.harnessCpuPercent.bench)} %; box ${fmt(r.box.busyPercent)} % busy (${fmt(r.box.busyBeforePercent)} % ` +
    `before), other work ${fmt(r.box.otherPercentOfCore)} % of a core`
  );
}

interface Row {
  kind: Kind;
  label: string;
  pick: (r: RoundRecord) => number | null | undefined;
  digits?: number;
  /** The box's figures are no comparison of the gateways: no ratio. */
  noRatio?: boolean;
}

const gatewayRows = (kind: Kind): Row[] => [
  { kind, label: 'gateway CPU per message (ms)', pick: (r) => r.usage.cpuMsPerMessage, digits: 3 },
  { kind, label: 'gateway CPU (% of one core)', pick: (r) => r.usage.cpuPercentOfCore },
  { kind, label: 'gateway peak RSS, whole tree (MB)', pick: (r) => r.usage.peakTreeRssMb },
  { kind, label: 'gateway peak RSS, largest process (MB)', pick: (r) => r.usage.peakProcessRssMb },
  { kind, label: 'whole box busy (% of all cores)', pick: (r) => r.box.busyPercent, noRatio: true },
  {
    kind,
    label: 'other work on the box (% of one core)',
    pick: (r) => r.box.otherPercentOfCore,
    noRatio: true,
  },
];

const latencyRows = (kind: Kind, from: string): Row[] => [
  { kind, label: `${from} → DLR callback p50 (ms)`, pick: (r) => r.latencyMs.p50 },
  { kind, label: `${from} → DLR callback p99 (ms)`, pick: (r) => r.latencyMs.p99 },
];

const rows: Row[] = [
  { kind: 'saturation', label: 'accepted sends/s', pick: (r) => r.load.acceptedPerS },
  { kind: 'saturation', label: 'DLR callbacks/s during the load', pick: (r) => r.duringLoad.callbacksPerS },
  ...latencyRows('saturation', 'send'),
  { kind: 'saturation', label: 'last DLR callback after (s)', pick: (r) => r.lastCallbackAfterS, digits: 1 },
  ...gatewayRows('saturation'),
  { kind: 'bulk', label: 'time to the last DLR callback (s)', pick: (r) => r.lastCallbackAfterS, digits: 1 },
  { kind: 'bulk', label: 'accepted sends/s', pick: (r) => r.load.acceptedPerS },
  { kind: 'bulk', label: 'DLR callbacks/s, first send to last callback', pick: (r) => r.callbacksPerS },
  ...latencyRows('bulk', 'send'),
  ...gatewayRows('bulk'),
  { kind: 'campaign', label: 'answer to the POST (ms)', pick: (r) => r.load.answerMs },
  {
    kind: 'campaign',
    label: 'time to the last DLR webhook (s)',
    pick: (r) => r.lastCallbackAfterS,
    digits: 1,
  },
  ...latencyRows('campaign', 'request start'),
  ...gatewayRows('campaign'),
  { kind: 'paced', label: 'accepted sends/s', pick: (r) => r.load.acceptedPerS },
  ...latencyRows('paced', 'send'),
  { kind: 'paced', label: 'gateway CPU (% of one core)', pick: (r) => r.usage.cpuPercentOfCore },
];

export interface Shape {
  seconds: number;
  bulk: number;
  campaign: number;
  pacedRate: number;
  pacedSeconds: number;
  connections: number;
}

function kindTitle(kind: Kind, shape: Shape): string {
  switch (kind) {
    case 'saturation':
      return `saturation, ${shape.seconds} s, ${shape.connections} connections`;
    case 'bulk':
      return `bulk, ${fmt(shape.bulk)} single sends`;
    case 'campaign':
      return `campaign, ONE POST /send × ${fmt(shape.campaign)} (Pigeon only)`;
    case 'paced':
      return `paced, ${fmt(shape.pacedRate)} sends/s for ${shape.pacedSeconds} s`;
  }
}

/** Prints the summary; returns whether every round's bookkeeping was exact. */
export function printSummary(records: RoundRecord[], shape: Shape, withKannel: boolean): boolean {
  const of = (gateway: GatewayName, kind: Kind) =>
    records.filter((r) => r.gateway === gateway && r.kind === kind);
  const med = (gateway: GatewayName, row: Row) => median(of(gateway, row.kind).map(row.pick));
  const runs = (gateway: GatewayName, row: Row) =>
    of(gateway, row.kind)
      .map((r) => fmt(row.pick(r), row.digits))
      .join(', ');

  console.log(
    '\n| round | figure | Kannel | Pigeon | Pigeon/Kannel | Kannel runs | Pigeon runs |\n| --- | --- | ---: | ---: | ---: | --- | --- |',
  );
  let lastKind: Kind | undefined;
  for (const row of rows) {
    if (of('pigeon', row.kind).length === 0 && of('kannel', row.kind).length === 0) continue;
    const kannel = med('kannel', row);
    const pigeon = med('pigeon', row);
    const ratio = kannel && pigeon !== null && !row.noRatio ? `${(pigeon / kannel).toFixed(2)}×` : '';
    const title = row.kind === lastKind ? '' : kindTitle(row.kind, shape);
    lastKind = row.kind;
    console.log(
      `| ${title} | ${row.label} | ${fmt(kannel, row.digits)} | ${fmt(pigeon, row.digits)} | ${ratio} | ${runs('kannel', row)} | ${runs('pigeon', row)} |`,
    );
  }

  const pick = (gateway: GatewayName, kind: Kind, value: (r: RoundRecord) => number | null | undefined) =>
    median(of(gateway, kind).map(value));
  const verdict = (met: boolean | null) => (met === null ? 'not measured' : met ? 'met' : 'MISSED');
  const compare = (
    label: string,
    kind: Kind,
    value: (r: RoundRecord) => number | null | undefined,
    digits: number,
    better: 'higher' | 'lower',
    factor = 1,
  ) => {
    const p = pick('pigeon', kind, value);
    const k = pick('kannel', kind, value);
    if (!withKannel || k === null)
      return `${label}: Pigeon ${fmt(p, digits)}; no Kannel figure to compare with`;
    const met = p === null ? null : better === 'higher' ? p >= k * factor : p <= k * factor;
    return `${label}: Pigeon ${fmt(p, digits)}, Kannel ${fmt(k, digits)} (${p === null ? '—' : (p / k).toFixed(2)}×): ${verdict(met)}`;
  };
  const absolute = (label: string, p: number | null, limit: number, digits: number) =>
    `${label}: Pigeon ${fmt(p, digits)}: ${verdict(p === null ? null : p <= limit)}`;
  console.log('\nTargets (medians):');
  for (const line of [
    compare('saturation accepted sends/s ≥ Kannel', 'saturation', (r) => r.load.acceptedPerS, 0, 'higher'),
    compare(
      'DLR callbacks/s during the load ≥ 80 % of Kannel',
      'saturation',
      (r) => r.duringLoad.callbacksPerS,
      0,
      'higher',
      0.8,
    ),
    absolute(
      `paced ${fmt(shape.pacedRate)}/s send → DLR p99 ≤ 500 ms`,
      pick('pigeon', 'paced', (r) => r.latencyMs.p99),
      500,
      0,
    ),
    compare(
      `${fmt(shape.bulk)} bulk, last DLR (s) ≤ Kannel`,
      'bulk',
      (r) => r.lastCallbackAfterS,
      1,
      'lower',
    ),
    absolute(
      `campaign of ${fmt(shape.campaign)}, last DLR webhook ≤ 15 s`,
      pick('pigeon', 'campaign', (r) => r.lastCallbackAfterS),
      15,
      1,
    ),
    `${absolute(
      'campaign peak RSS ≤ 300 MB (largest process)',
      pick('pigeon', 'campaign', (r) => r.usage.peakProcessRssMb),
      300,
      0,
    )} (whole tree under npm: ${fmt(pick('pigeon', 'campaign', (r) => r.usage.peakTreeRssMb))} MB)`,
    compare(
      'CPU per message (ms) ≤ Kannel, saturation',
      'saturation',
      (r) => r.usage.cpuMsPerMessage,
      3,
      'lower',
    ),
    compare('CPU per message (ms) ≤ Kannel, bulk', 'bulk', (r) => r.usage.cpuMsPerMessage, 3, 'lower'),
  ]) {
    console.log(`  ${line}`);
  }

  console.log(
    '\nBookkeeping (exact = callbacks = distinct = submit_sm at the SMSC, 0 duplicates, accepted ≤ callbacks ≤ sent):',
  );
  for (const r of records) console.log(`  ${r.gateway} ${r.kind} ${r.rep}: ${bookkeepingLine(r)}`);
  const wrong = records.filter((r) => !r.bookkeeping.exact);
  console.log(
    wrong.length === 0
      ? `  all ${records.length} rounds exact: every message the SMSC got had exactly one DLR callback.`
      : `  ${wrong.length} round(s) WRONG: ${wrong.map((r) => `${r.gateway} ${r.kind} ${r.rep}`).join(', ')}`,
  );
  return wrong.length === 0;
}

// What the pipeline bench records per round, and the summary it prints at the end: medians per gateway,
// Pigeon/Kannel ratios, the verdict per target, and each round's bookkeeping.

import type { PostgresStats } from './postgres.ts';

export type Kind = 'saturation' | 'bulk' | 'paced' | 'campaign';
/** Kannel, or Pigeon on its embedded SQLite or on PostgreSQL (`pigeon` on old command lines: SQLite). */
export type GatewayName = 'kannel' | 'pigeon-sqlite' | 'pigeon-postgres';
export const gatewayNames: GatewayName[] = ['kannel', 'pigeon-sqlite', 'pigeon-postgres'];
export const gatewayTitles: Record<GatewayName, string> = {
  kannel: 'Kannel',
  'pigeon-sqlite': 'Pigeon SQLite',
  'pigeon-postgres': 'Pigeon PG',
};
const isPigeon = (gateway: GatewayName) => gateway !== 'kannel';

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
  /** What the gateway's processes used (Pigeon's own, not PostgreSQL's: that is `postgres`). */
  usage: {
    cpuSeconds: number;
    cpuMsPerMessage: number | null;
    /** The gateway's and PostgreSQL's (backends and background processes) together. */
    withDatabaseCpuMsPerMessage: number | null;
    cpuPercentOfCore: number;
    peakTreeRssMb: number;
    peakProcessRssMb: number;
    processes: number;
    problems: string;
  };
  /** Pigeon on PostgreSQL: what the server's processes used for the round, and its statistics. */
  postgres?: {
    schema: string;
    /** The backends of the gateway's connections (found by application name). */
    backendsCpuSeconds: number;
    backendsCpuMsPerMessage: number | null;
    /** walwriter, background writer, checkpointer, autovacuum: the whole server's, shared with other work. */
    backgroundCpuSeconds: number;
    backgroundCpuMsPerMessage: number | null;
    cpuMsPerMessage: number | null;
    /** Most backends of the gateway seen at once. */
    backends: number;
    stats?: PostgresStats;
  };
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
    `(${fmt(g.cpuPercentOfCore)} % of a core)${
      r.postgres
        ? ` + PostgreSQL ${fmt(r.postgres.cpuMsPerMessage, 3)} (backends ${fmt(r.postgres.backendsCpuMsPerMessage, 3)}, ` +
          `up to ${r.postgres.backends} at once; background ${fmt(r.postgres.backgroundCpuMsPerMessage, 3)}) = ` +
          `${fmt(g.withDatabaseCpuMsPerMessage, 3)} ms CPU/msg`
        : ''
    }, peak RSS ${fmt(g.peakTreeRssMb)} MB tree / ${fmt(g.peakProcessRssMb)} MB ` +
    `largest process (${g.processes} processes); SMSC ${fmt(r.harnessCpuPercent.smsc)} %, receiver ` +
    `${fmt(r.harnessCpuPercent.receiver)} %, load ${fmt(r.harnessCpuPercent.load)} %, bench ` +
    `${fmt(r.harnessCpuPercent.bench)} %; box ${fmt(r.box.busyPercent)} % busy (${fmt(r.box.busyBeforePercent)} % ` +
    `before), other work ${fmt(r.box.otherPercentOfCore)} % of a core`
  );
}

const tableColumns: [keyof PostgresStats['tables'][string], string][] = [
  ['seq_scan', 'seq scans'],
  ['seq_tup_read', 'rows read by them'],
  ['idx_scan', 'index scans'],
  ['idx_tup_fetch', 'rows fetched by them'],
  ['n_tup_ins', 'inserted'],
  ['n_tup_upd', 'updated'],
  ['n_tup_hot_upd', 'of which HOT'],
  ['n_tup_del', 'deleted'],
];

/** Rollbacks per message above which a round is flagged: the sessions' own reads roll back none. */
const rollbacksOfConcern = 0.001;

/** PostgreSQL's statistics of a round (or their medians), per accepted message: lines to print. */
export function postgresStatsLines(stats: PostgresStats): string[] {
  const d = stats.perMessage;
  const lines = [
    `PostgreSQL per accepted message (database-wide, other sessions on the server included): ` +
      `${fmt(d.xact_commit, 2)} commits, ${fmt(d.xact_rollback, 3)} rollbacks, ` +
      `${d.statements === null ? 'statements —' : `${fmt(d.statements, 2)} statements`}; rows returned ` +
      `${fmt(d.tup_returned, 1)}, fetched ${fmt(d.tup_fetched, 1)}, inserted ${fmt(d.tup_inserted, 2)}, updated ` +
      `${fmt(d.tup_updated, 2)}, deleted ${fmt(d.tup_deleted, 2)}; blocks hit ${fmt(d.blks_hit, 1)}, read ${fmt(d.blks_read, 2)}`,
  ];
  if (stats.statementsNote) lines.push(stats.statementsNote);
  // Nothing in a bench round is refused, so a rollback is a write that failed and fell back: a group of sends
  // written again one by one (the gateway's log says so), at twice the cost. It hid a broken statement once.
  if (d.xact_rollback > rollbacksOfConcern) {
    lines.push(
      `WARNING: ${fmt(d.xact_rollback * 1000, 1)} rollbacks per 1,000 messages: some write fails and falls back; see the gateway's log (BENCH_PIPELINE_KEEP=1)`,
    );
  }
  const tables = Object.entries(stats.tables).sort(
    ([, a], [, b]) => b.seq_tup_read + b.idx_tup_fetch - (a.seq_tup_read + a.idx_tup_fetch),
  );
  lines.push(
    `per table of the round's schema (exact), per accepted message: ${tableColumns.map(([, label]) => label).join(' / ')}`,
  );
  for (const [table, counts] of tables) {
    lines.push(
      `  ${table.padEnd(22)} ${tableColumns.map(([key]) => fmt(counts[key], key === 'seq_scan' ? 4 : 2).padStart(9)).join(' ')}`,
    );
  }
  return lines;
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
  {
    kind,
    label: 'PostgreSQL CPU per message (ms): backends + background',
    pick: (r) => r.postgres?.cpuMsPerMessage,
    digits: 3,
  },
  {
    kind,
    label: 'gateway + PostgreSQL CPU per message (ms)',
    pick: (r) => r.usage.withDatabaseCpuMsPerMessage,
    digits: 3,
  },
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
export function printSummary(records: RoundRecord[], shape: Shape): boolean {
  const of = (gateway: GatewayName, kind: Kind) =>
    records.filter((r) => r.gateway === gateway && r.kind === kind);
  const present = gatewayNames.filter((g) => records.some((r) => r.gateway === g));
  const pick = (gateway: GatewayName, kind: Kind, value: (r: RoundRecord) => number | null | undefined) =>
    median(of(gateway, kind).map(value));
  const runs = (gateway: GatewayName, row: Row) =>
    of(gateway, row.kind)
      .map((r) => fmt(row.pick(r), row.digits))
      .join(', ');
  // The ratios the issue names: each Pigeon against Kannel, and PostgreSQL against SQLite.
  const ratios = (
    [
      ['pigeon-sqlite', 'kannel'],
      ['pigeon-postgres', 'pigeon-sqlite'],
      ['pigeon-postgres', 'kannel'],
    ] as [GatewayName, GatewayName][]
  ).filter(([a, b]) => present.includes(a) && present.includes(b));
  const short = (g: GatewayName) => gatewayTitles[g].replace('Pigeon ', '');

  console.log(
    `\n| round | figure | ${present.map((g) => gatewayTitles[g]).join(' | ')} | ${ratios
      .map(([a, b]) => `${short(a)}/${short(b)}`)
      .join(' | ')} | ${present.map((g) => `${gatewayTitles[g]} runs`).join(' | ')} |`,
  );
  console.log(
    `| --- | --- |${' ---: |'.repeat(present.length + ratios.length)}${' --- |'.repeat(present.length)}`,
  );
  let lastKind: Kind | undefined;
  for (const row of rows) {
    const medians = new Map(present.map((g) => [g, median(of(g, row.kind).map(row.pick))]));
    if ([...medians.values()].every((m) => m === null)) continue;
    const ratioCells = ratios.map(([a, b]) => {
      const [x, y] = [medians.get(a), medians.get(b)];
      return x != null && y && !row.noRatio ? `${(x / y).toFixed(2)}×` : '';
    });
    const title = row.kind === lastKind ? '' : kindTitle(row.kind, shape);
    lastKind = row.kind;
    console.log(
      `| ${title} | ${row.label} | ${present.map((g) => fmt(medians.get(g), row.digits)).join(' | ')} | ` +
        `${ratioCells.join(' | ')} | ${present.map((g) => runs(g, row)).join(' | ')} |`,
    );
  }

  const verdict = (met: boolean | null) => (met === null ? 'not measured' : met ? 'met' : 'MISSED');
  /** `gateway`'s median against `than`'s, times `factor`; a line only when both were measured. */
  const compare = (
    label: string,
    gateway: GatewayName,
    than: GatewayName,
    kind: Kind,
    value: (r: RoundRecord) => number | null | undefined,
    digits: number,
    better: 'higher' | 'lower',
    factor = 1,
  ): string[] => {
    if (!present.includes(gateway)) return [];
    const p = pick(gateway, kind, value);
    const k = pick(than, kind, value);
    if (k === null)
      return [
        `${label}: ${gatewayTitles[gateway]} ${fmt(p, digits)}; no ${gatewayTitles[than]} figure to compare with`,
      ];
    const met = p === null ? null : better === 'higher' ? p >= k * factor : p <= k * factor;
    return [
      `${label}: ${gatewayTitles[gateway]} ${fmt(p, digits)}, ${gatewayTitles[than]} ${fmt(k, digits)} ` +
        `(${p === null ? '—' : (p / k).toFixed(2)}×): ${verdict(met)}`,
    ];
  };
  const absolute = (label: string, gateway: GatewayName, p: number | null, limit: number, digits: number) =>
    present.includes(gateway)
      ? [`${label}: ${gatewayTitles[gateway]} ${fmt(p, digits)}: ${verdict(p === null ? null : p <= limit)}`]
      : [];
  const pigeons = present.filter(isPigeon);
  const sends = (r: RoundRecord) => r.load.acceptedPerS;
  const lastDlr = (r: RoundRecord) => r.lastCallbackAfterS;
  const cpu = (r: RoundRecord) => r.usage.withDatabaseCpuMsPerMessage;
  console.log("\nTargets (medians; Pigeon PG's CPU is its processes' and PostgreSQL's together):");
  for (const line of [
    ...pigeons.flatMap((g) =>
      compare('saturation accepted sends/s ≥ Kannel', g, 'kannel', 'saturation', sends, 0, 'higher'),
    ),
    ...compare(
      'saturation accepted sends/s, PG ≥ 0.8 × SQLite',
      'pigeon-postgres',
      'pigeon-sqlite',
      'saturation',
      sends,
      0,
      'higher',
      0.8,
    ),
    ...compare(
      'saturation accepted sends/s, PG ≥ 0.7 × Kannel',
      'pigeon-postgres',
      'kannel',
      'saturation',
      sends,
      0,
      'higher',
      0.7,
    ),
    ...pigeons.flatMap((g) =>
      compare(
        'DLR callbacks/s during the load ≥ 80 % of Kannel',
        g,
        'kannel',
        'saturation',
        (r) => r.duringLoad.callbacksPerS,
        0,
        'higher',
        0.8,
      ),
    ),
    ...pigeons.flatMap((g) =>
      absolute(
        `paced ${fmt(shape.pacedRate)}/s send → DLR p99 ≤ 500 ms`,
        g,
        pick(g, 'paced', (r) => r.latencyMs.p99),
        500,
        0,
      ),
    ),
    ...pigeons.flatMap((g) =>
      compare(`${fmt(shape.bulk)} bulk, last DLR (s) ≤ Kannel`, g, 'kannel', 'bulk', lastDlr, 1, 'lower'),
    ),
    ...pigeons.flatMap((g) =>
      absolute(
        `campaign of ${fmt(shape.campaign)}, last DLR webhook ≤ 15 s`,
        g,
        pick(g, 'campaign', lastDlr),
        15,
        1,
      ),
    ),
    ...compare(
      'campaign last DLR webhook, PG ≤ 1.25 × SQLite',
      'pigeon-postgres',
      'pigeon-sqlite',
      'campaign',
      lastDlr,
      1,
      'lower',
      1.25,
    ),
    ...pigeons.flatMap((g) =>
      absolute(
        'campaign peak RSS ≤ 300 MB (largest process)',
        g,
        pick(g, 'campaign', (r) => r.usage.peakProcessRssMb),
        300,
        0,
      ).map(
        (line) =>
          `${line} (whole tree under npm: ${fmt(pick(g, 'campaign', (r) => r.usage.peakTreeRssMb))} MB)`,
      ),
    ),
    ...pigeons.flatMap((g) =>
      compare('CPU per message (ms) ≤ Kannel, saturation', g, 'kannel', 'saturation', cpu, 3, 'lower'),
    ),
    ...pigeons.flatMap((g) =>
      compare('CPU per message (ms) ≤ Kannel, bulk', g, 'kannel', 'bulk', cpu, 3, 'lower'),
    ),
  ]) {
    console.log(`  ${line}`);
  }

  const onPostgres = records.filter((r) => r.postgres?.stats);
  if (onPostgres.length > 0) {
    console.log(
      '\nPostgreSQL statistics of Pigeon PG (medians of the rounds, per accepted message; CPU: backends of ' +
        "Pigeon's connections, and apart the server's background processes, shared with other work):",
    );
    for (const kind of ['saturation', 'bulk', 'campaign', 'paced'] as Kind[]) {
      const rounds = onPostgres.filter((r) => r.kind === kind);
      if (rounds.length === 0) continue;
      const m = (value: (r: RoundRecord) => number | null | undefined, digits = 3) =>
        fmt(median(rounds.map(value)), digits);
      console.log(
        `  ${kindTitle(kind, shape)} (${rounds.length} round${rounds.length > 1 ? 's' : ''}): CPU per message ` +
          `Pigeon ${m((r) => r.usage.cpuMsPerMessage)} ms + PostgreSQL backends ${m((r) => r.postgres?.backendsCpuMsPerMessage)} ` +
          `+ background ${m((r) => r.postgres?.backgroundCpuMsPerMessage)} = ${m((r) => r.usage.withDatabaseCpuMsPerMessage)} ms`,
      );
      for (const line of postgresStatsLines(medianStats(rounds.map((r) => r.postgres!.stats!)))) {
        console.log(`    ${line}`);
      }
    }
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

/** Per counter, the median over rounds (a table missing from a round counts as 0 there). */
function medianStats(all: PostgresStats[]): PostgresStats {
  const perMessage = Object.fromEntries(
    Object.keys(all[0].perMessage).map((key) => [
      key,
      median(all.map((s) => s.perMessage[key as keyof PostgresStats['perMessage']])),
    ]),
  ) as PostgresStats['perMessage'];
  const tables: PostgresStats['tables'] = {};
  for (const table of new Set(all.flatMap((s) => Object.keys(s.tables)))) {
    tables[table] = Object.fromEntries(
      tableColumns.map(([key]) => [key, median(all.map((s) => s.tables[table]?.[key] ?? 0)) ?? 0]),
    ) as PostgresStats['tables'][string];
  }
  const note = all.find((s) => s.statementsNote)?.statementsNote;
  return { perMessage, tables, ...(note ? { statementsNote: note } : {}) };
}

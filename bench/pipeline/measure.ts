// What a gateway and the box spend, read from /proc. A gateway is a set of process trees (Pigeon: the one
// under `npm start`, whatever it starts; Kannel: bearerbox and smsbox): each sample walks the trees again,
// so processes or worker threads started during the round count too.
//   - CPU: utime + stime of every process seen in the trees, since the round started (a process already
//     running then counts from that moment, a later one from its start); a process that exits keeps what
//     it had used at its last sample.
//   - Memory: the sum of VmRSS over the trees at each sample (its peak is the gateway's footprint), and the
//     largest VmHWM of a single process (the kernel's own peak, which no sampling interval can miss).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { sleep } from './processes.ts';

/** Clock ticks per second of /proc's CPU times (100 on Linux unless the kernel says otherwise). */
function ticksPerSecond(): number {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  } catch {
    return 100;
  }
}
const clockTicks = ticksPerSecond();

interface ProcessReading {
  /** pid and start time: a pid reused by another process is another process. */
  key: string;
  ticks: number;
  rssKb: number;
  hwmKb: number;
}

function read(pid: number): ProcessReading | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which may itself hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
    return {
      key: `${pid}:${fields[19]}`,
      ticks: Number(fields[11]) + Number(fields[12]),
      rssKb: kb('VmRSS'),
      hwmKb: kb('VmHWM'),
    };
  } catch {
    return undefined;
  }
}

/** The CPU a process has used so far, user and system, in ms; 0 once it is gone. */
export function cpuMsOf(pid: number): number {
  const reading = read(pid);
  return reading === undefined ? 0 : (reading.ticks * 1000) / clockTicks;
}

/** `root` and all its descendants (children of every thread), parents first. */
export function processTree(root: number): number[] {
  const pids = [root];
  for (let i = 0; i < pids.length; i++) {
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${pids[i]}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      try {
        const children = readFileSync(`/proc/${pids[i]}/task/${task}/children`, 'utf8').trim();
        if (children) pids.push(...children.split(' ').map(Number));
      } catch {
        // The thread or process is gone.
      }
    }
  }
  return pids;
}

export interface TreeUsage {
  cpuSeconds: number;
  /** The sum of VmRSS over the trees at the last sample. */
  treeRssMb: number;
  /** Largest sum of VmRSS over the trees at one sample. */
  peakTreeRssMb: number;
  /** Largest VmHWM of a single process of the trees. */
  peakProcessRssMb: number;
  /** Most processes seen in the trees at once. */
  processes: number;
}

/**
 * Samples the processes `pids()` names at each tick (the set may change between ticks: a process first seen
 * after the start counts from its own start).
 */
export class ProcessSampler {
  private readonly seen = new Map<string, { base: number; last: number }>();
  private started = false;
  private timer: NodeJS.Timeout | undefined;
  private peakTreeKb = 0;
  private lastTreeKb = 0;
  private peakProcessKb = 0;
  private mostProcesses = 0;

  constructor(private readonly pids: () => number[]) {}

  /** Takes the baseline now, then samples every `intervalMs` until stop(). */
  start(intervalMs = 250): this {
    this.sample();
    this.started = true;
    this.timer = setInterval(() => this.sample(), intervalMs);
    return this;
  }

  stop(): TreeUsage {
    clearInterval(this.timer);
    return this.usage();
  }

  /** Reads the trees now and returns the usage so far. */
  usage(): TreeUsage {
    this.sample();
    let ticks = 0;
    for (const { base, last } of this.seen.values()) ticks += last - base;
    return {
      cpuSeconds: ticks / clockTicks,
      treeRssMb: this.lastTreeKb / 1024,
      peakTreeRssMb: this.peakTreeKb / 1024,
      peakProcessRssMb: this.peakProcessKb / 1024,
      processes: this.mostProcesses,
    };
  }

  private sample(): void {
    let treeKb = 0;
    let count = 0;
    for (const pid of this.pids()) {
      const reading = read(pid);
      if (!reading) continue;
      count++;
      treeKb += reading.rssKb;
      this.peakProcessKb = Math.max(this.peakProcessKb, reading.hwmKb);
      const known = this.seen.get(reading.key);
      if (known) known.last = reading.ticks;
      else this.seen.set(reading.key, { base: this.started ? 0 : reading.ticks, last: reading.ticks });
    }
    this.lastTreeKb = treeKb;
    this.peakTreeKb = Math.max(this.peakTreeKb, treeKb);
    this.mostProcesses = Math.max(this.mostProcesses, count);
  }
}

/** Samples whole process trees: each tick walks them again, so processes started meanwhile count too. */
export class TreeSampler extends ProcessSampler {
  private readonly roots: number[];

  constructor(roots: number[]) {
    const all = [...roots];
    super(() => all.flatMap(processTree));
    this.roots = all;
  }

  addRoot(pid: number): void {
    this.roots.push(pid);
  }
}

/** The box's CPU time so far, all cores: busy and total, in clock ticks. */
export function boxTimes(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]
    .trim()
    .split(/\s+/)
    .slice(1, 9)
    .map(Number);
  const total = fields.reduce((sum, n) => sum + n, 0);
  // idle and iowait are the time nothing ran.
  return { busy: total - fields[3] - fields[4], total };
}

/** Busy share of all cores between two readings, in percent. */
export function busyPercent(
  from: { busy: number; total: number },
  to: { busy: number; total: number },
): number {
  const total = to.total - from.total;
  return total > 0 ? (100 * (to.busy - from.busy)) / total : 0;
}

/**
 * Waits until the box is quiet (busy below `thresholdPct` of all cores over 2 s), for at most `maxSeconds`;
 * returns the last busy share measured. Other work on the box (test suites of other sessions) would
 * otherwise be measured as the gateway's slowness.
 */
export async function waitQuiet(thresholdPct: number, maxSeconds: number): Promise<number> {
  const deadline = Date.now() + maxSeconds * 1000;
  for (;;) {
    const before = boxTimes();
    await sleep(2_000);
    const busy = busyPercent(before, boxTimes());
    if (busy < thresholdPct) return busy;
    if (Date.now() >= deadline) {
      console.log(`  the box is still ${busy.toFixed(0)} % busy after ${maxSeconds} s: measuring anyway`);
      return busy;
    }
  }
}

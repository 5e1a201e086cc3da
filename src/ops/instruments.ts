// Counters and histograms for the hot paths (an API request, a submit, a receipt), read by prom-client at the
// scrape. prom-client's own Counter and Histogram hash and check their labels at every call: 0.5 µs for an
// increment, 0.8–1.5 µs for an observation, measured here (bench/metrics.bench.ts), which the delivery worker
// would pay several times per message. Here a series is an object found once (or by one string key), and a
// call is a field increment or a bucket search; the work of building labels is done at the scrape, where
// prom-client formats and aggregates these like its own metrics (a registry takes any object with `get`).
import type { Registry } from 'prom-client';

type Labels = Record<string, string>;

interface MetricValue {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

/** What prom-client's registry reads of a metric (the shape of its getMetricsAsJSON). */
interface MetricJson {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  values: MetricValue[];
}

/** One counter series: add to `value`. */
export interface CounterSeries {
  value: number;
}

export class FastCounter {
  private readonly series = new Map<string, { labels: Labels; counter: CounterSeries }>();

  constructor(
    readonly name: string,
    readonly help: string,
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  /** The series of these labels (created at 0 on first use, so it shows before its first increment). */
  with(labels: Labels, key = Object.values(labels).join('\u0000')): CounterSeries {
    let found = this.series.get(key);
    if (!found) {
      found = { labels, counter: { value: 0 } };
      this.series.set(key, found);
    }
    return found.counter;
  }

  get(): MetricJson {
    const values: MetricValue[] = [];
    for (const { labels, counter } of this.series.values())
      values.push({ value: counter.value, labels: { ...labels } });
    return { name: this.name, help: this.help, type: 'counter', aggregator: 'sum', values };
  }
}

/** One histogram series: `observe` a value. */
export class HistogramSeries {
  /** Observations per bucket (not cumulative), the last one above every bound. */
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Array(bounds.length + 1).fill(0);
  }

  observe(value: number): void {
    const { bounds } = this;
    let i = 0;
    while (i < bounds.length && value > bounds[i]) i++;
    this.counts[i]++;
    this.sum += value;
    this.count++;
  }
}

export class FastHistogram {
  private readonly series = new Map<string, { labels: Labels; histogram: HistogramSeries }>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  with(labels: Labels, key = Object.values(labels).join('\u0000')): HistogramSeries {
    let found = this.series.get(key);
    if (!found) {
      found = { labels, histogram: new HistogramSeries(this.bounds) };
      this.series.set(key, found);
    }
    return found.histogram;
  }

  get(): MetricJson {
    const values: MetricValue[] = [];
    const bucket = `${this.name}_bucket`;
    for (const { labels, histogram } of this.series.values()) {
      let cumulative = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        cumulative += histogram.counts[i];
        values.push({ value: cumulative, labels: { ...labels, le: this.bounds[i] }, metricName: bucket });
      }
      values.push({ value: histogram.count, labels: { ...labels, le: '+Inf' }, metricName: bucket });
      values.push({ value: histogram.sum, labels: { ...labels }, metricName: `${this.name}_sum` });
      values.push({ value: histogram.count, labels: { ...labels }, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: 'histogram', aggregator: 'sum', values };
  }
}

// Time charts drawn by uPlot: small (about 50 KB), fast, and made for time series, which is all the
// console plots (messages per day, delivery rate, clicks over time).
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

export interface ChartSeries {
  label: string;
  /** One value per point of `x`; null leaves a gap. */
  values: (number | null)[];
  color: string;
  /** Bars instead of a line. */
  bars?: boolean;
  /** Values are ratios (0–1): the axis shows percents. */
  percent?: boolean;
}

interface ChartProps {
  /** Instants of the points, in epoch ms. */
  x: number[];
  series: ChartSeries[];
  /** Read by screen readers, and shown when there is nothing to plot. */
  title: string;
  height?: number;
  timeZone: string;
}

export function TimeChart({ x, series, title, height = 220, timeZone }: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el || x.length === 0) return;
    const percent = series.some((s) => s.percent);
    const options: uPlot.Options = {
      width: Math.max(el.clientWidth, 240),
      height,
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), timeZone),
      legend: { show: true },
      cursor: { drag: { x: false, y: false } },
      scales: {
        // Half a step of room on each side, so the first and last bars are whole and a lone point shows.
        x: {
          time: true,
          range: (_u, min, max) => {
            const stepS = x.length > 1 ? (x[x.length - 1] - x[0]) / (x.length - 1) / 1000 : 3600;
            return [min - stepS / 2, max + stepS / 2];
          },
        },
        y: { range: percent ? [0, 1] : (_u, _min, max) => [0, Math.max(1, max)] },
      },
      axes: [
        {},
        {
          values: (_u, ticks) => ticks.map((t) => (percent ? `${Math.round(t * 100)} %` : String(t))),
          // Counts are whole: no tick between two integers.
          ...(percent
            ? {}
            : { incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 100_000] }),
          size: 56,
        },
      ],
      series: [
        {},
        ...series.map((s) => ({
          label: s.label,
          stroke: s.color,
          fill: s.bars ? `${s.color}99` : undefined,
          width: s.bars ? 0 : 2,
          paths: s.bars ? uPlot.paths.bars?.({ size: [0.7, 40] }) : undefined,
          // Points on lines: a day alone between gaps is still seen.
          points: s.bars ? { show: false } : { show: true, size: 6 },
          value: (_u: uPlot, v: number | null) =>
            v === null ? '—' : s.percent ? `${(v * 100).toFixed(1)} %` : String(v),
        })),
      ],
    };
    const data: uPlot.AlignedData = [x.map((ms) => ms / 1000), ...series.map((s) => s.values)];
    const plot = new uPlot(options, data, el);
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(el.clientWidth, 240), height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [x, series, height, timeZone]);
  if (x.length === 0) return <p class="empty">{title}: nothing to show yet.</p>;
  return <div class="chart" ref={box} role="img" aria-label={title} />;
}

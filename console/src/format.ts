// Numbers and dates as the console shows them: in the account's time zone (the API's TIMEZONE) and the
// browser's language.

const numberFormat = new Intl.NumberFormat();
export const formatNumber = (n: number | string | null | undefined): string =>
  n === null || n === undefined || n === '' ? '—' : numberFormat.format(Number(n));

export const formatPercent = (ratio: number): string =>
  Number.isFinite(ratio) ? `${(ratio * 100).toFixed(ratio >= 0.995 || ratio === 0 ? 0 : 1)} %` : '—';

/**
 * A date the API gave as `Y-m-d H:i:s` on the zone's wall clock, or ISO 8601, or epoch ms: shown on the
 * zone's wall clock, `2026-11-23 14:05`, with the zone named where `withZone` is set.
 */
export function formatDate(
  value: string | number | null | undefined,
  timeZone: string,
  withZone = false,
): string {
  if (value === null || value === undefined || value === '') return '—';
  if (typeof value === 'string' && /^\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)?$/.test(value)) {
    return `${value.slice(0, 16)}${withZone ? ` (${timeZone})` : ''}`;
  }
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return String(value);
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(date);
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')} ${get('hour')}:${get('minute')}${withZone ? ` (${timeZone})` : ''}`;
}

/** Epoch ms of a `Y-m-d H:i:s` wall-clock time in `timeZone` (for charts, which plot instants). */
export function wallTimeMs(value: string, timeZone: string): number {
  const [date, time = '00:00:00'] = value.split(' ');
  const [y, m, d] = date.split('-').map(Number);
  const [hh, mm, ss = 0] = time.split(':').map(Number);
  const guess = Date.UTC(y, m - 1, d, hh, mm, ss);
  // The zone's offset at that instant, read back through Intl; applied twice to settle across a change.
  const offset = (ms: number) => {
    const shown = formatDate(ms, timeZone);
    const [sd, st] = shown.split(' ');
    const [sy, sm, sdd] = sd.split('-').map(Number);
    const [sh, smin] = st.split(':').map(Number);
    return Date.UTC(sy, sm - 1, sdd, sh, smin) - Math.floor(ms / 60_000) * 60_000;
  };
  const first = guess - offset(guess);
  return guess - offset(first);
}

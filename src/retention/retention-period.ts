// Retention periods as SMSFactor writes them: "30d" (days), "6m" (calendar months) or "-1" (keep).

/** The kinds of data the job deletes, each served by the room that owns it. */
export const retentionKinds = ['message', 'list', 'campaign', 'mo', 'lookup'] as const;
export type RetentionKind = (typeof retentionKinds)[number];

/**
 * Every setting GET/PUT /retention knows: the kinds above, and SMSFactor's `survey`, stored and shown for its
 * clients though Pigeon keeps no surveys for it to delete.
 */
export const retentionSettings = [...retentionKinds, 'survey'] as const;
export type RetentionSetting = (typeof retentionSettings)[number];

export const keepForever = '-1';

const maxDays = 3650;
const maxMonths = 120;

/** The canonical form of a period ("6m", "30d", "-1"), or a sentence saying what is wrong. */
export function parsePeriod(value: unknown): { ok: true; period: string } | { ok: false; reason: string } {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
  if (text === keepForever) return { ok: true, period: keepForever };
  const match = /^(\d{1,5})\s*([dDmM])$/.exec(text);
  if (!match) {
    return { ok: false, reason: 'must be a number of days ("30d"), of months ("6m"), or "-1" to keep' };
  }
  const count = Number(match[1]);
  const unit = match[2].toLowerCase();
  const max = unit === 'd' ? maxDays : maxMonths;
  if (count < 1 || count > max) {
    return { ok: false, reason: `must be between 1${unit} and ${max}${unit}` };
  }
  return { ok: true, period: `${count}${unit}` };
}

/** The instant before which data kept for `period` is deleted, or undefined to keep everything. */
export function cutoffOf(period: string, now: number): number | undefined {
  if (period === keepForever) return undefined;
  const count = Number(period.slice(0, -1));
  if (period.endsWith('d')) return now - count * 86_400_000;
  const date = new Date(now);
  // Calendar months on UTC dates: 31 March less one month is 3 March (JavaScript's overflow), a day's slack.
  date.setUTCMonth(date.getUTCMonth() - count);
  return date.getTime();
}

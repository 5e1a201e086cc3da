// GET /metrics/consumption: the credits the caller and its direct sub-accounts used over a period of days, per
// country, from what was actually sent: summed in SQL over delivery's sent messages (consumption.repo.ts); this
// side decides the period, the filters, whose accounts and the answer's shape.
import { isSupportedCountry } from 'libphonenumber-js/max';
import { DateTime } from 'luxon';
import type { AuthContext } from '../shared/auth-context.ts';
import type { Clock } from '../shared/clock.ts';
import { parseDay as parseDayIn } from '../shared/days.ts';
import { ApiError } from '../shared/errors.ts';
import { idIn } from '../shared/ids.ts';
import type { Db } from '../store/db.ts';
import { consumptionRepo } from './consumption.repo.ts';
import type { ConsoView, ConsumptionView } from './consumption.schemas.ts';

export interface ConsumptionQuery {
  date_start?: string;
  date_end?: string;
  /** Alpha-2 codes separated by commas; a repeated query parameter arrives as an array. */
  country?: string | string[];
  sub_account_id?: string;
}

/** The longest period one read covers, in days (both ends included): a year, leap day included. */
export const maxConsumptionDays = 366;
/** The key of messages sent to a number of no country (ISO's code for an unknown region). */
export const unknownCountry = 'ZZ';

export type ConsumptionService = ReturnType<typeof createConsumptionService>;

export function createConsumptionService(deps: { db: Db; clock: Clock; timezone: string }) {
  const { db, clock, timezone } = deps;

  const parseDay = (field: string, value: string | undefined) => parseDayIn(field, value, timezone);

  /**
   * Whole days in the zone, both included: by default from the first day of `date_end`'s month (the current
   * month's without `date_end`) to `date_end`, itself today by default (or `date_start`, if that is later).
   */
  function parsePeriod(query: ConsumptionQuery) {
    const today = DateTime.fromMillis(clock.now(), { zone: timezone }).startOf('day');
    const start = parseDay('date_start', query.date_start);
    const givenEnd = parseDay('date_end', query.date_end);
    const end = givenEnd ?? (start && start > today ? start : today);
    const first = start ?? end.startOf('month');
    if (end < first) {
      throw ApiError.data(
        `date_end "${end.toISODate()}" is before date_start "${first.toISODate()}": the period would be empty`,
      );
    }
    // Calendar days, whatever daylight saving does to the hours between them.
    const days = Math.round(end.diff(first, 'days').days) + 1;
    if (days > maxConsumptionDays) {
      throw ApiError.data(
        `the period from ${first.toISODate()} to ${end.toISODate()} is ${days} days long; one read covers at most ${maxConsumptionDays} days${givenEnd ? '' : ': give date_end'}`,
      );
    }
    return {
      from: first.toMillis(),
      to: end.plus({ days: 1 }).startOf('day').toMillis() - 1,
      dateStart: first.toISODate()!,
      dateEnd: end.toISODate()!,
    };
  }

  /**
   * `FR,BE` (or repeated parameters): distinct upper-case codes (`ZZ`, the key of numbers of no country, as
   * null), or undefined for every country.
   */
  function parseCountries(value: string | string[] | undefined): (string | null)[] | undefined {
    const raw = (Array.isArray(value) ? value : [value ?? ''])
      .flatMap((v) => String(v).split(','))
      .map((c) => c.trim())
      .filter((c) => c !== '');
    if (raw.length === 0) return undefined;
    const codes = new Set<string | null>();
    for (const code of raw) {
      const upper = code.toUpperCase();
      if (upper === unknownCountry) {
        codes.add(null);
        continue;
      }
      if (!/^[A-Z]{2}$/.test(upper) || !isSupportedCountry(upper)) {
        throw ApiError.data(
          `country "${code}" must be an ISO 3166-1 alpha-2 country code; several are separated by commas (e.g. FR,BE)`,
        );
      }
      codes.add(upper);
    }
    return [...codes];
  }

  function conso(rows: { country: string | null; credits: number }[]): ConsoView {
    const byCountry = new Map<string, number>();
    let total = 0;
    for (const row of rows) {
      const key = row.country ?? unknownCountry;
      byCountry.set(key, (byCountry.get(key) ?? 0) + row.credits);
      total += row.credits;
    }
    const sorted = [...byCountry].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1));
    return { total, by_country: Object.fromEntries(sorted) };
  }

  return {
    /**
     * GET /metrics/consumption. Counts the caller's and its direct sub-accounts' messages sent in the period
     * (a sub-account, which has none, sees only itself); `sub_account_id` counts that direct sub-account alone
     * (-5 for any other id, as every sub-account route), `country` only those countries. Each account is
     * listed even when it used nothing, so the answer always shows whose consumption was counted.
     */
    async consumption(auth: AuthContext, query: ConsumptionQuery): Promise<{ data: ConsumptionView }> {
      const period = parsePeriod(query);
      const countries = parseCountries(query.country);
      const own = await consumptionRepo.account(db, auth.accountId);
      if (!own) throw ApiError.notFound(`account ${auth.accountId} does not exist`);
      let subs: { id: number; company: string | null }[];
      const onlySub = query.sub_account_id?.trim();
      if (onlySub !== undefined && onlySub !== '') {
        const id = idIn(onlySub);
        const child = id === undefined ? undefined : await consumptionRepo.child(db, auth.accountId, id);
        if (!child) {
          throw ApiError.notFound(`sub_account_id "${onlySub}" is not a sub-account of this account`);
        }
        subs = [child];
      } else {
        subs = await consumptionRepo.children(db, auth.accountId);
      }
      const counted = [...(onlySub ? [] : [Number(own.id)]), ...subs.map((s) => Number(s.id))];
      // Nothing to read without an account or a country to count.
      const rows =
        counted.length === 0 || countries?.length === 0
          ? []
          : await consumptionRepo.sentParts(db, counted, period, countries);
      const byAccount = new Map<number, typeof rows>();
      for (const row of rows) {
        const list = byAccount.get(row.accountId);
        if (list) list.push(row);
        else byAccount.set(row.accountId, [row]);
      }
      const of = (accountId: number) => byAccount.get(accountId) ?? [];
      const mine = conso(onlySub ? [] : of(Number(own.id)));
      const everyone = conso(rows);
      return {
        data: {
          total: everyone.total,
          by_country: everyone.by_country,
          my_account: { account_id: Number(own.id), company: own.company ?? '', conso: mine },
          by_sub_accounts: subs.map((s) => ({
            account_id: Number(s.id),
            company: s.company ?? '',
            conso: conso(of(Number(s.id))),
          })),
          date_start: period.dateStart,
          date_end: period.dateEnd,
        },
      };
    },
  };
}

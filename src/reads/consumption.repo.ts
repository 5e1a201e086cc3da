// SQL of GET /metrics/consumption: the caller and its direct sub-accounts, and the credits their messages
// were charged, sent within a period per account and country, from the partial index of sent messages. Read only.
import { sql } from 'kysely';
import type { Executor } from '../store/db.ts';
import type { Period } from './query-parsers.ts';

/** Accounts summed by one statement of `sentParts`. */
const maxGroupedAccounts = 500;

export const consumptionRepo = {
  /** An account's id and company. */
  account(db: Executor, id: number) {
    return db.selectFrom('accounts').select(['id', 'company']).where('id', '=', id).executeTakeFirst();
  },

  /** The direct sub-accounts of `parentId`, oldest first. */
  children(db: Executor, parentId: number) {
    return db
      .selectFrom('accounts')
      .select(['id', 'company'])
      .where('parent_id', '=', parentId)
      .orderBy('id')
      .execute();
  },

  /** One direct sub-account of `parentId`, or undefined for any other account. */
  child(db: Executor, parentId: number, id: number) {
    return db
      .selectFrom('accounts')
      .select(['id', 'company'])
      .where('id', '=', id)
      .where('parent_id', '=', parentId)
      .executeTakeFirst();
  },

  /**
   * The credits the accounts' messages sent within the period were charged (stored at their send; their parts
   * for a message stored before prices), summed per account and country, in grouped statements of at most
   * `maxGroupedAccounts` accounts: read from the partial index of sent messages (`messages_sent`, migrations 017
   * and 034) alone, never a message row. `countries` keeps only those countries (null:
   * numbers of no country).
   */
  async sentParts(
    db: Executor,
    accountIds: readonly number[],
    period: Period,
    countries: readonly (string | null)[] | undefined,
  ): Promise<{ accountId: number; country: string | null; credits: number }[]> {
    const out: { accountId: number; country: string | null; credits: number }[] = [];
    for (let i = 0; i < accountIds.length; i += maxGroupedAccounts) {
      const chunk = accountIds.slice(i, i + maxGroupedAccounts);
      let query = db
        .selectFrom('messages')
        .select(['account_id', 'country'])
        .select(sql<number>`sum(coalesce(${sql.ref('credits')}, ${sql.ref('parts')}))`.as('credits'))
        .where('account_id', 'in', chunk)
        // Repeats the index's predicate, which the bounds below imply anyway.
        .where('sent_at', 'is not', null)
        .where('sent_at', '>=', period.from)
        .where('sent_at', '<=', period.to);
      if (countries !== undefined) {
        const codes = countries.filter((c) => c !== null);
        const none = codes.length < countries.length;
        query = query.where((eb) =>
          eb.or([
            ...(codes.length > 0 ? [eb('country', 'in', codes)] : []),
            ...(none ? [eb('country', 'is', null)] : []),
          ]),
        );
      }
      const rows = await query.groupBy(['account_id', 'country']).execute();
      for (const row of rows) {
        out.push({ accountId: Number(row.account_id), country: row.country, credits: Number(row.credits) });
      }
    }
    return out;
  },
};

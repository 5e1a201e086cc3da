// SQL of replies: the parts of long replies until the last one comes, complete replies, and when a HELP was
// last answered per account and number. No rules here.
import type { Selectable } from 'kysely';
import type { Executor } from '../store/db.ts';
import type { MoFragmentsTable, RepliesTable } from '../store/schema.ts';

export type NewReply = Omit<Selectable<RepliesTable>, 'id'>;
export type ReplyType = 'MO' | 'STOP';

export const repliesRepo = {
  /**
   * Takes the right to answer a HELP from `number` for the account: true when none was answered since
   * `answeredBefore`, and the answer's time is then recorded. One row per account and number, so of two
   * transactions racing for it one inserts or updates and the other waits and finds it taken.
   */
  async claimHelpAnswer(
    db: Executor,
    accountId: number,
    number: string,
    now: number,
    answeredBefore: number,
  ): Promise<boolean> {
    const row = await db
      .insertInto('help_answers')
      .values({ account_id: accountId, number, answered_at: now })
      .onConflict((oc) =>
        oc
          .columns(['account_id', 'number'])
          .doUpdateSet({ answered_at: now })
          .where('help_answers.answered_at', '<=', answeredBefore),
      )
      .returning('account_id')
      .executeTakeFirst();
    return row !== undefined;
  },

  /** Forgets HELP answers older than the interval: they no longer hold the next one back. */
  async deleteHelpAnswersBefore(db: Executor, before: number): Promise<void> {
    await db.deleteFrom('help_answers').where('answered_at', '<', before).execute();
  },

  async insertReply(db: Executor, reply: NewReply): Promise<void> {
    await db.insertInto('replies').values(reply).execute();
  },

  async insertFragment(
    db: Executor,
    fragment: Omit<Selectable<MoFragmentsTable>, 'id' | 'received_at'>,
    now: number,
  ): Promise<void> {
    await db
      .insertInto('mo_fragments')
      .values({ ...fragment, received_at: now })
      .onConflict((oc) => oc.columns(['sender', 'recipient', 'ref', 'seq']).doNothing())
      .execute();
  },

  fragments(db: Executor, sender: string, recipient: string, ref: number) {
    return db
      .selectFrom('mo_fragments')
      .select(['seq', 'total', 'text', 'connector'])
      .where('sender', '=', sender)
      .where('recipient', '=', recipient)
      .where('ref', '=', ref)
      .orderBy('seq')
      .execute();
  },

  /** Deletes a reply's parts; the count tells whether this transaction is the one that took them. */
  async deleteFragments(db: Executor, sender: string, recipient: string, ref: number): Promise<number> {
    const result = await db
      .deleteFrom('mo_fragments')
      .where('sender', '=', sender)
      .where('recipient', '=', recipient)
      .where('ref', '=', ref)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  },

  /** Replies whose parts have all arrived. */
  completeFragmentGroups(db: Executor, limit: number) {
    return db
      .selectFrom('mo_fragments')
      .select(['sender', 'recipient', 'ref', 'total'])
      .groupBy(['sender', 'recipient', 'ref', 'total'])
      .having((eb) => eb(eb.fn.countAll(), '>=', eb.ref('total')))
      .limit(limit)
      .execute();
  },

  async deleteFragmentsBefore(db: Executor, before: number): Promise<void> {
    await db.deleteFrom('mo_fragments').where('received_at', '<', before).execute();
  },
};

// Delivery's data lifecycle: retention's purges of finished messages and old replies (whether a campaign still
// has a message to send), the pruning of orphan receipts, and the erasure of a phone number from messages,
// replies, reply fragments and HELP answers.
import type { Clock } from '../shared/clock.ts';
import type { Erasure } from '../shared/erasure.ts';
import type { Db, Executor } from '../store/db.ts';
import { deliveryLifecycleRepo } from './delivery-lifecycle.repo.ts';

export type DeliveryLifecycleService = ReturnType<typeof createDeliveryLifecycleService>;

export function createDeliveryLifecycleService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;

  return {
    /** Retention: up to `limit` of the account's finished messages due before `before`, in a transaction. */
    purgeMessages(accountId: number, before: number, limit: number): Promise<number> {
      return db
        .transaction()
        .execute((tx) => deliveryLifecycleRepo.purgeMessages(tx, accountId, before, limit));
    },

    /** Retention: up to `limit` finished messages of a campaign, inside the caller's transaction. */
    purgeCampaignMessages(tx: Executor, campaignId: number, limit: number): Promise<number> {
      return deliveryLifecycleRepo.purgeCampaignMessages(tx, campaignId, limit);
    },

    /** Whether a campaign still has a message queued, being sent or held. */
    hasUnfinished(tx: Executor, campaignId: number): Promise<boolean> {
      return deliveryLifecycleRepo.hasUnfinished(tx, campaignId);
    },

    /** Retention: up to `limit` of the account's replies received before `before`, in a transaction. */
    purgeReplies(accountId: number, before: number, limit: number): Promise<number> {
      return db
        .transaction()
        .execute((tx) => deliveryLifecycleRepo.purgeReplies(tx, accountId, before, limit));
    },

    /** Pruning: up to `limit` orphan receipts received before `before` (never matched after two minutes). */
    pruneOrphanReceipts(before: number, limit: number): Promise<number> {
      return deliveryLifecycleRepo.pruneOrphanReceipts(db, before, limit);
    },

    /**
     * Erasure, in the caller's transaction: the number's messages keep their rows for billing and counters,
     * with the placeholder for recipient and nothing of what was written for the person (a message not sent
     * yet is never sent); its replies go, and so do its reply fragments when every account is erased (they
     * belong to no account yet). Answers the counts and the messages, whose links the caller erases too.
     */
    async eraseNumber(tx: Executor, erasure: Erasure) {
      const messages = await deliveryLifecycleRepo.messagesTo(tx, erasure);
      await deliveryLifecycleRepo.anonymizeMessages(
        tx,
        messages.map((m) => m.id),
        erasure.placeholder,
        clock.now(),
      );
      const replies = await deliveryLifecycleRepo.deleteRepliesFrom(tx, erasure);
      await deliveryLifecycleRepo.deleteHelpAnswersTo(tx, erasure);
      const fragments =
        erasure.accountIds === undefined
          ? await deliveryLifecycleRepo.deleteFragmentsFrom(tx, erasure.number)
          : 0;
      return { counts: { messages: messages.length, replies, mo_fragments: fragments }, messages };
    },
  };
}

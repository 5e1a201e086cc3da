// A campaign after its send: cancelling one no worker has taken (its cost refunded), retention's purge of
// old campaigns and the pruning of past days' message counts, and what the delivery worker asks of a
// campaign (its sender and pushtype; a message no route took, refunded and counted in not_allowed).
import type { CreditsService } from '../accounts/credits.service.ts';
import type { Config } from '../config.ts';
import type { DeliveryService } from '../delivery/delivery.service.ts';
import type { DeliveryLifecycleService } from '../delivery/delivery-lifecycle.service.ts';
import { moderationPayload } from '../events/event-bodies.ts';
import type { LinksService } from '../links/links.service.ts';
import type { AuditTrail } from '../shared/audit-trail.ts';
import type { AuthContext } from '../shared/auth-context.ts';
import type { Clock } from '../shared/clock.ts';
import { ApiError } from '../shared/errors.ts';
import { idIn, idOut } from '../shared/ids.ts';
import { zonedTime } from '../shared/zoned-time.ts';
import type { Db, Executor } from '../store/db.ts';
import { appendEvents } from '../store/outbox.ts';
import { campaignsRepo } from './campaigns.repo.ts';
import { createMessageCaps } from './message-caps.ts';

export type CampaignsService = ReturnType<typeof createCampaignsService>;

export function createCampaignsService(deps: {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'TIMEZONE'>;
  credits: Pick<CreditsService, 'refund'>;
  links: Pick<LinksService, 'purgeCampaign'>;
  delivery: Pick<DeliveryService, 'cancelUntaken' | 'releaseCampaign'>;
  /**
   * Told after the commit of a moderation decision: how many messages it queued (a nudge to the delivery
   * worker) and that it wrote a MODERATION event (a nudge to the webhook dispatcher).
   */
  decided?: (queued: number) => void;
  /**
   * Whether an account is locked (the accounts room's): an approved campaign of a locked account keeps its
   * messages held, for the unlock to release. Absent: never locked.
   */
  locked?: (accountId: number) => Promise<boolean>;
  /**
   * An approved campaign's messages, queued at once, spread over its account's SMS parts per second (the
   * limits room's): `of` read before the transaction, `released` inside it. Absent: never paced.
   */
  pace?: {
    of(accountId: number): Promise<number>;
    released(tx: Executor, accountId: number, partsPerSecond: number): Promise<void>;
  };
  /** Retention of a campaign's messages: whether any is left to send, and the finished ones purged. */
  deliveryLifecycle: Pick<DeliveryLifecycleService, 'purgeCampaignMessages' | 'hasUnfinished'>;
  /** The audit log: a cancel's entry, in its transaction. */
  audit: AuditTrail;
}) {
  const { db, clock, config, credits, delivery, deliveryLifecycle, audit } = deps;
  const messageCaps = createMessageCaps({ timezone: config.TIMEZONE });
  const dates = zonedTime(config.TIMEZONE);

  /**
   * The operator's decision on a campaign held for moderation, in one transaction: the campaign's status, its
   * held messages queued (approved) or cancelled (refused: its cost refunded to the account that paid, with a
   * ledger line, and its messages given back to the day's count), and the MODERATION event. Undefined when the
   * campaign is not held (unknown, or decided already: the status update's row lock orders two decisions).
   */
  async function decide(id: number, approved: boolean, reason: string, by?: AuthContext) {
    const now = clock.now();
    const owner = approved ? await campaignsRepo.ownerOf(db, id) : undefined;
    // Read before the transaction: a lock taken meanwhile holds what this approval queues only at its next lock.
    const keepHeld = owner !== undefined && ((await deps.locked?.(owner)) ?? false);
    const pace = owner !== undefined && !keepHeld ? ((await deps.pace?.of(owner)) ?? 0) : 0;
    const result = await db.transaction().execute(async (tx) => {
      const campaign = await campaignsRepo.decideModeration(
        tx,
        id,
        approved ? 'scheduled' : 'refused',
        reason,
      );
      if (!campaign) return undefined;
      const messages = keepHeld ? Number(campaign.sent) : await delivery.releaseCampaign(tx, id, approved);
      const cost = Number(campaign.cost);
      const accountId = Number(campaign.account_id);
      if (pace > 0 && messages > 0) await deps.pace!.released(tx, accountId, pace);
      if (!approved) {
        if (cost > 0) await credits.refund(tx, Number(campaign.billed_account_id), cost, id);
        await messageCaps.giveBack(tx, accountId, Number(campaign.created_at), Number(campaign.sent));
      }
      await appendEvents(
        tx,
        [
          {
            account_id: accountId,
            campaign_id: id,
            type: 'MODERATION',
            payload: moderationPayload(id, approved ? 'approved' : 'refused', reason, dates.wallTime(now)),
          },
        ],
        now,
      );
      // The operator's decision, on the customer's account (`by` absent: the operator's CLI).
      await audit.record(tx, {
        accountId,
        auth: by,
        action: approved ? 'campaign.approve' : 'campaign.refuse',
        objectType: 'campaign',
        objectId: id,
      });
      return {
        id: idOut(id),
        status: approved ? ('approved' as const) : ('refused' as const),
        messages,
        refunded: approved ? 0 : cost,
      };
    });
    if (result) deps.decided?.(approved && !keepHeld ? result.messages : 0);
    return result;
  }

  return {
    /** The operator approves a held campaign: its messages are queued, due as they were. */
    approveHeld: (id: number, by?: AuthContext) => decide(id, true, '', by),

    /** The operator refuses a held campaign: its messages cancelled, its cost refunded. */
    refuseHeld: (id: number, reason: string, by?: AuthContext) => decide(id, false, reason, by),

    /** The moderation queue: campaigns held, every account's, oldest first, after `afterId`. */
    async listHeld(afterId: number, limit: number) {
      const rows = await campaignsRepo.held(db, afterId, limit);
      return rows.map((r) => ({
        id: idOut(Number(r.id)),
        account_id: idOut(Number(r.account_id)),
        sender: r.sender ?? '',
        text: r.text,
        cost: Number(r.cost),
        sent: Number(r.sent),
        date: dates.wallTime(Number(r.due_at)),
        creation_date: dates.wallTime(Number(r.created_at)),
        held_by: r.moderation_note ?? '',
      }));
    },

    /** The account's campaigns held for moderation, in the caller's transaction (an unlock keeps them held). */
    heldIds: (tx: Executor, accountId: number) => campaignsRepo.heldIds(tx, accountId),

    /**
     * Retention: deletes, in one transaction, up to `limit` rows of the account's oldest campaign created
     * before `before` whose messages are all done with: its messages first, then its links, then the campaign.
     * A campaign with a message still queued, being sent or held is left for a later pass. Returns the rows
     * deleted (0: nothing left to delete).
     */
    async purgeCampaigns(accountId: number, before: number, limit: number): Promise<number> {
      for (const campaignId of await campaignsRepo.createdBefore(db, accountId, before, 50)) {
        const deleted = await db.transaction().execute(async (tx) => {
          if (await deliveryLifecycle.hasUnfinished(tx, campaignId)) return 0;
          const messages = await deliveryLifecycle.purgeCampaignMessages(tx, campaignId, limit);
          if (messages > 0) return messages;
          const links = await deps.links.purgeCampaign(tx, campaignId, limit);
          if (links > 0) return links;
          await campaignsRepo.remove(tx, campaignId);
          return 1;
        });
        if (deleted > 0) return deleted;
      }
      return 0;
    },

    /**
     * DELETE /send/:ticket: cancels a campaign none of whose messages a worker has taken, and gives its cost
     * back to the account that paid, with a ledger line, all in one transaction. Answers the balance after.
     */
    async cancel(auth: AuthContext, ticket: string): Promise<{ credits: number }> {
      const id = idIn(ticket);
      return db.transaction().execute(async (tx) => {
        const campaign = id === undefined ? undefined : await campaignsRepo.find(tx, auth.accountId, id);
        if (id === undefined || !campaign) throw ApiError.notFound(`campaign "${ticket}" not found`);
        const alreadyCancelled = () => ApiError.data(`campaign ${id} is already cancelled`);
        if (campaign.status === 'cancelled') throw alreadyCancelled();
        if (campaign.status === 'refused')
          throw ApiError.data(`campaign ${id} was refused by moderation: its cost was refunded then`);
        const messages = Number(campaign.sent);
        if (messages === 0) {
          throw ApiError.data(`campaign ${id} has no message to cancel: every recipient was filtered out`);
        }
        // The status first: its row lock makes a concurrent cancel of the same campaign wait, then find it done.
        if (!(await campaignsRepo.markCancelled(tx, auth.accountId, id))) throw alreadyCancelled();
        // A worker may be claiming this campaign's messages right now. Only messages never taken are
        // cancelled; if any is missing, the campaign has started and the whole cancel rolls back.
        const cancelled =
          campaign.status === 'moderation'
            ? await delivery.releaseCampaign(tx, id, false)
            : await delivery.cancelUntaken(tx, auth.accountId, id);
        if (cancelled !== messages) {
          throw ApiError.data(
            `campaign ${id} cannot be cancelled: ${messages - cancelled} of its ${messages} messages have already been taken for sending`,
          );
        }
        const cost = Number(campaign.cost);
        const billed = Number(campaign.billed_account_id);
        // The refund goes to the account that paid (the parent, for an unlimited sub-account).
        const balance = await credits.refund(tx, billed, cost, id);
        // Its messages were never sent: they no longer count against the day's and the month's quotas.
        await messageCaps.giveBack(tx, auth.accountId, Number(campaign.created_at), messages);
        await audit.record(tx, {
          accountId: auth.accountId,
          auth,
          action: 'campaign.cancel',
          objectType: 'campaign',
          objectId: id,
        });
        return { credits: balance };
      });
    },

    /** Deletes up to `limit` message counts of the days before yesterday and months before last; returns how many. */
    pruneDailyCounts(now: number, limit?: number): Promise<number> {
      return messageCaps.prune(db, now, limit);
    },

    /** Sender and pushtype of each campaign: what the delivery worker needs besides the messages. */
    async sendingOptions(
      ids: readonly number[],
    ): Promise<Map<number, { sender: string | null; pushtype: string }>> {
      const rows = await campaignsRepo.sendingOptions(db, ids);
      return new Map(rows.map((r) => [Number(r.id), { sender: r.sender, pushtype: r.pushtype }]));
    },

    /**
     * Messages the delivery worker found no route for when it sent them (the routes changed after the send
     * counted them), inside the transaction that records their failure: each moves from its campaign's `sent`
     * to `not_allowed`, and what it was charged at its send (its stored credits, never priced again) goes back to the account that paid, with a ledger line, as
     * for a recipient no route took at send time. A free campaign (a HELP answer, an alert SMS) refunds nothing.
     * Campaigns are taken in id order, so concurrent workers lock their rows in the same order.
     */
    async notRouted(
      tx: Executor,
      messages: readonly { campaignId: number; accountId: number; credits: number }[],
    ): Promise<void> {
      const byCampaign = new Map<number, { accountId: number; messages: number; credits: number }>();
      for (const m of messages) {
        const entry = byCampaign.get(m.campaignId) ?? { accountId: m.accountId, messages: 0, credits: 0 };
        entry.messages++;
        entry.credits += m.credits;
        byCampaign.set(m.campaignId, entry);
      }
      for (const id of [...byCampaign.keys()].sort((a, b) => a - b)) {
        const entry = byCampaign.get(id)!;
        const campaign = await campaignsRepo.find(tx, entry.accountId, id);
        if (!campaign) continue;
        const refunded = Math.min(Number(campaign.cost), entry.credits);
        await campaignsRepo.countNotRouted(tx, entry.accountId, id, entry.messages, refunded);
        if (refunded > 0) await credits.refund(tx, Number(campaign.billed_account_id), refunded, id);
      }
    },
  };
}

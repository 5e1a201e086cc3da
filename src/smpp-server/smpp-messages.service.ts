// What an SMPP user's messages do beyond the bind: a submit_sm is a send of the user's account through the
// sending service (the same path as POST /send: filters, price per part, debit, routing, history), marked in
// `smpp_submits` in the send's own transaction; the receipts and replies of those campaigns are copied into
// `smpp_outbox` in the transaction that writes their DLR or MO event (the `eventsWritten` port that delivery
// declares), and drained as deliver_sm by the process serving the user's receiver and transceiver binds.
import type { CampaignsService } from '../campaigns/campaigns.service.ts';
import type { FilterReason } from '../campaigns/recipient-filter.ts';
import type { CampaignResult, SendingService } from '../campaigns/sending.service.ts';
import type { DeliveryService } from '../delivery/delivery.service.ts';
import type { Clock } from '../shared/clock.ts';
import type { ErasedCounts, Erasure } from '../shared/erasure.ts';
import { ApiError, Status } from '../shared/errors.ts';
import { zonedTime } from '../shared/zoned-time.ts';
import { DlrStatus } from '../sms/dlr-status.ts';
import { normalizeNumber } from '../sms/numbers.ts';
import type { Db, Executor } from '../store/db.ts';
import type { NewEvent } from '../store/outbox.ts';
import { CommandStatus, MessageState, type QuerySmResp } from './pdu.ts';
import { type NewOutboxRow, type SmppOutboxRow, smppMessagesRepo } from './smpp-messages.repo.ts';
import { smppAbsoluteTime } from './smpp-time.ts';
import type { BoundUser } from './smpp-users.service.ts';

/** A submit_sm as the server read it: its text decoded and its parts joined. */
export interface SmppSubmit {
  source: string;
  destination: string;
  text: string;
  /** Keep the text in UCS-2 (data_coding 8), as POST /send's `unicode: 1`. */
  unicode: boolean;
  registeredDelivery: number;
  /** The ids answered to the other parts of a long message that asked for a receipt: each gets one. */
  partIds?: string[];
  /** The ids answered to every earlier part of a long message: a query_sm or cancel_sm may name any of them. */
  earlierIds?: string[];
  /** When it is due (schedule_delivery_time); undefined: at once. */
  dueAt?: number;
}

/** A submit refused: the command_status of its submit_sm_resp (docs/smpp-server.md). */
export class SubmitRefused extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
  ) {
    super(reason);
  }
}

export type SmppMessagesService = ReturnType<typeof createSmppMessagesService>;

/** The most destinations a submit_multi carries (number_of_dests is one octet). */
export const maxDestinations = 255;

/** The digits of an id answered to an earlier part of a long message (smpp-server.ts `partIdSource`). */
const partIdDigits = 16;

/** The most campaigns one cancel_sm by source and destination cancels. */
const maxCancelled = 1000;

/** An address as compared: a leading `+` dropped. */
const bare = (address: string) => address.replace(/^\+/, '');

/** Whether a submit_sm asks for a receipt: registered_delivery's low bits 01 (any outcome). Kannel sends 0x11. */
export const wantsReceipt = (registeredDelivery: number) => (registeredDelivery & 0x03) === 1;

function receiptStat(dlrStatus: number): { stat: string; state: number } {
  if (dlrStatus === DlrStatus.delivered) return { stat: 'DELIVRD', state: MessageState.delivered };
  if (dlrStatus === DlrStatus.expired) return { stat: 'EXPIRED', state: MessageState.expired };
  if (dlrStatus === DlrStatus.rejected) return { stat: 'REJECTD', state: MessageState.rejected };
  return { stat: 'UNDELIV', state: MessageState.undeliverable };
}

/** The command_status of a send the sending service refused (by its ApiError). */
function refusalOf(error: ApiError): SubmitRefused {
  if (error.httpCode === 429) return new SubmitRefused(CommandStatus.ESME_RMSGQFUL, error.details);
  if (error.status === Status.credits) return new SubmitRefused(CommandStatus.outOfCredits, error.details);
  if (error.status === Status.data && error.details.startsWith('sms.message.sender')) {
    return new SubmitRefused(CommandStatus.ESME_RINVSRCADR, error.details);
  }
  return new SubmitRefused(CommandStatus.ESME_RSUBMITFAIL, error.details);
}

/** The command_status of a recipient the send's filter kept out, by the counter it landed in. */
const filteredStatus: Record<Exclude<FilterReason, 'duplicated'>, number> = {
  invalid: CommandStatus.ESME_RINVDSTADR,
  blacklisted: CommandStatus.blacklisted,
  npai: CommandStatus.npai,
  not_allowed: CommandStatus.notAllowed,
};

/** YYMMDDhhmm on the zone's wall clock, as Appendix B dates a receipt. */
const receiptDate = (wallTime: string) =>
  wallTime.slice(2, 4) +
  wallTime.slice(5, 7) +
  wallTime.slice(8, 10) +
  wallTime.slice(11, 13) +
  wallTime.slice(14, 16);

/** The send's caller: the user's account; the audit log names the SMPP user and its bind's address. */
const authOf = (user: BoundUser, clientIp: string) => ({
  accountId: user.accountId,
  tokenId: 0,
  parentId: null,
  clientIp,
  smppUser: { id: user.id, systemId: user.systemId },
});

export function createSmppMessagesService(deps: {
  db: Db;
  clock: Clock;
  sending: Pick<SendingService, 'send'>;
  delivery: Pick<DeliveryService, 'messageStatesOf' | 'untakenCampaignsTo'>;
  campaigns: Pick<CampaignsService, 'cancel'>;
  options: {
    timezone: string;
    /** How long a receipt or reply waits for a bind before it is dropped (DLR_WAIT). */
    keepMs: number;
  };
}) {
  const { db, clock, options } = deps;
  const dates = zonedTime(options.timezone);

  /** Outbox rows for the DLR and MO events of campaigns an SMPP user sent, in the events' transaction. */
  async function eventsWritten(tx: Executor, events: readonly NewEvent[], now: number): Promise<void> {
    const campaignIds: number[] = [];
    for (const e of events) {
      if (e.type !== 'CLICKER' && e.type !== 'BALANCE_ALERT' && e.campaign_id !== null)
        campaignIds.push(Number(e.campaign_id));
    }
    if (campaignIds.length === 0) return;
    const submits = new Map(
      (await smppMessagesRepo.submitsOf(tx, [...new Set(campaignIds)])).map((s) => [
        Number(s.campaign_id),
        s,
      ]),
    );
    if (submits.size === 0) return;
    const rows: NewOutboxRow[] = [];
    for (const e of events) {
      const submit = e.campaign_id === null ? undefined : submits.get(Number(e.campaign_id));
      if (!submit) continue;
      const body = JSON.parse(e.payload) as Record<string, unknown>;
      const base = { smpp_user_id: submit.smpp_user_id, created_at: now, expires_at: now + options.keepMs };
      if (e.type === 'DLR') {
        // A receipt for each part that asked for one: the message's submit (its last part), and the earlier
        // parts of a long message, answered ids of their own.
        const ids = submit.part_ids ? submit.part_ids.split(',') : [];
        if (wantsReceipt(Number(submit.registered_delivery))) ids.push(String(submit.campaign_id));
        if (ids.length === 0) continue;
        const status = Number(body.status);
        const { stat, state } = receiptStat(status);
        const delivered = status === DlrStatus.delivered ? '001' : '000';
        const doneDates =
          `submit date:${receiptDate(dates.wallTime(Number(submit.created_at)))} ` +
          `done date:${receiptDate(dates.wallTime(now))}`;
        for (const id of ids) {
          rows.push({
            ...base,
            kind: 'receipt',
            source_addr: String(body.destination),
            destination_addr: submit.source_addr,
            text: `id:${id} sub:001 dlvrd:${delivered} ${doneDates} stat:${stat} err:${String(status).padStart(3, '0')} text:${submit.text_head}`,
            message_id: id,
            message_state: state,
          });
        }
      } else if (e.type === 'MO' || e.type === 'STOP') {
        rows.push({
          ...base,
          kind: 'mo',
          source_addr: String(body.from),
          destination_addr: submit.source_addr,
          text: String(body.message),
          message_id: null,
          message_state: null,
        });
      }
    }
    await smppMessagesRepo.insertOutbox(tx, rows);
  }

  /**
   * The user's own submit of `messageId` (its campaign's ticket, or the id answered to one of its earlier parts)
   * from `source` (empty: any), if its mark is still kept.
   */
  async function ownSubmit(user: BoundUser, messageId: string, source: string) {
    if (!/^[1-9]\d{0,15}$/.test(messageId)) return undefined;
    let submit = await smppMessagesRepo.submitOf(db, Number(messageId), user.id);
    if (!submit && messageId.length === partIdDigits) {
      for (const campaignId of await smppMessagesRepo.campaignsOfPart(db, Number(messageId))) {
        submit ??= await smppMessagesRepo.submitOf(db, campaignId, user.id);
      }
    }
    return submit && (source === '' || bare(source) === bare(submit.source_addr)) ? submit : undefined;
  }

  /** Cancels the campaign `ticket` as DELETE /send does; false when it cannot be (taken, already cancelled). */
  async function cancelled(user: BoundUser, clientIp: string, ticket: string): Promise<boolean> {
    try {
      await deps.campaigns.cancel(authOf(user, clientIp), ticket);
      return true;
    } catch (error) {
      if (error instanceof ApiError) return false;
      throw error;
    }
  }

  /**
   * Cancels the user's messages from `source` to `destination` that no worker has taken: the campaigns of its
   * submits with that one destination. How many were cancelled.
   */
  async function cancelTo(user: BoundUser, clientIp: string, source: string, destination: string) {
    const recipient = normalizeNumber(destination);
    if (recipient === undefined) return 0;
    const campaignIds = await deps.delivery.untakenCampaignsTo(user.accountId, recipient, maxCancelled);
    let count = 0;
    for (const submit of await smppMessagesRepo.submitsOf(db, campaignIds)) {
      if (Number(submit.smpp_user_id) !== user.id || bare(submit.source_addr) !== bare(source)) continue;
      const ticket = String(submit.campaign_id);
      // A submit_multi's campaign has other destinations: it is cancelled whole only, by its own id.
      if ((await deps.delivery.messageStatesOf(Number(ticket), 2)).length > 1) continue;
      if (await cancelled(user, clientIp, ticket)) count++;
    }
    return count;
  }

  /** One send of `sm` to `destinations` through the sending service, marked in `smpp_submits` (see `submit`). */
  async function send(
    user: BoundUser,
    clientIp: string,
    sm: Omit<SmppSubmit, 'destination'>,
    destinations: readonly string[],
  ): Promise<{ messageId: string; unsuccessful: { destination: string; status: number }[] }> {
    const now = clock.now();
    const unsuccessful: { destination: string; status: number }[] = [];
    let result: CampaignResult;
    try {
      result = await deps.sending.send(
        authOf(user, clientIp),
        {
          text: sm.text,
          sender: sm.source.replace(/^\+/, ''),
          pushtype: 'alert',
          unicode: sm.unicode ? '1' : '0',
        },
        destinations.map((value) => ({ value })),
        {
          simulate: false,
          dueAt: sm.dueAt,
          rejected: (destination, reason) => {
            if (reason !== 'duplicated') unsuccessful.push({ destination, status: filteredStatus[reason] });
          },
          // In the send's transaction: a receipt can never come for a campaign not yet marked.
          record: async (tx, answer) => {
            if (answer.sent === 0 || answer.ticket === undefined) return;
            await smppMessagesRepo.insertSubmit(tx, {
              campaign_id: Number(answer.ticket),
              smpp_user_id: user.id,
              source_addr: sm.source,
              registered_delivery: sm.registeredDelivery,
              part_ids: sm.partIds && sm.partIds.length > 0 ? sm.partIds.join(',') : null,
              text_head: [...sm.text].slice(0, 20).join(''),
              created_at: now,
            });
            await smppMessagesRepo.insertParts(
              tx,
              (sm.earlierIds ?? []).map((id) => ({
                part_id: Number(id),
                campaign_id: Number(answer.ticket),
                created_at: now,
              })),
            );
          },
        },
      );
    } catch (error) {
      if (error instanceof ApiError) throw refusalOf(error);
      throw error;
    }
    // In the order given: the filter tells the blacklist's and the NPAI list's after the others.
    unsuccessful.sort((a, b) => destinations.indexOf(a.destination) - destinations.indexOf(b.destination));
    if (result.sent === 0 || result.ticket === undefined) {
      throw new SubmitRefused(
        unsuccessful[0]?.status ?? CommandStatus.ESME_RSUBMITFAIL,
        'no destination kept',
      );
    }
    return { messageId: result.ticket, unsuccessful };
  }

  return {
    /**
     * Sends one message of the user's account, through the sending service, from a bind at `clientIp`: returns
     * the message id of its submit_sm_resp (the campaign's ticket), or throws SubmitRefused with the
     * command_status to answer.
     */
    async submit(user: BoundUser, clientIp: string, sm: SmppSubmit): Promise<string> {
      return (await send(user, clientIp, sm, [sm.destination])).messageId;
    },

    /**
     * A submit_multi: one send of the message to every destination (one campaign, one message id), and the
     * destinations the filter kept out with the command_status each would have had alone (a repeated one is
     * sent once and is not among them). Throws SubmitRefused when none is sent.
     */
    submitMulti(
      user: BoundUser,
      clientIp: string,
      sm: Omit<SmppSubmit, 'destination'>,
      destinations: readonly string[],
    ): Promise<{ messageId: string; unsuccessful: { destination: string; status: number }[] }> {
      return send(user, clientIp, sm, destinations);
    },

    eventsWritten,

    /**
     * A cancel_sm: cancels the user's message `messageId` (from `source`, or any when empty) as DELETE /send
     * does, its cost refunded, if no worker has taken it yet (a scheduled message, mostly). With an empty
     * `messageId`, every such message of the user from `source` to `destination` (SMPP 3.4, 4.9.1); a
     * submit_multi's message is cancelled only whole, by its id, never by one of its destinations. Whether any was.
     */
    async cancel(
      user: BoundUser,
      clientIp: string,
      messageId: string,
      source: string,
      destination: string,
    ): Promise<boolean> {
      if (messageId === '') return (await cancelTo(user, clientIp, source, destination)) > 0;
      const submit = await ownSubmit(user, messageId, source);
      return submit !== undefined && cancelled(user, clientIp, String(submit.campaign_id));
    },

    /**
     * A query_sm: where the message the user's submit_sm got `messageId` for stands, or undefined when it is
     * not one of the user's (unknown, another user's, a source_addr other than its own, or a mark already
     * pruned). A long message is known by the id of any of its parts. A submit_multi's message is en route while
     * any destination's is; then delivered if every one was, else as its first destination not delivered.
     */
    async query(user: BoundUser, messageId: string, source: string): Promise<QuerySmResp | undefined> {
      const submit = await ownSubmit(user, messageId, source);
      if (!submit) return undefined;
      const messages = await deps.delivery.messageStatesOf(Number(submit.campaign_id), maxDestinations);
      if (messages.length === 0) return undefined;
      const states = messages.map((message) => {
        const status = message.dlr_status === null ? null : Number(message.dlr_status);
        let messageState: number = MessageState.enroute;
        if (message.state === 'cancelled') messageState = MessageState.deleted;
        else if (message.state === 'delivered' || message.state === 'failed' || message.state === 'expired')
          messageState = receiptStat(status ?? DlrStatus.notDelivered).state;
        return { messageState, status, updatedAt: Number(message.updated_at) };
      });
      if (states.some((s) => s.messageState === MessageState.enroute)) {
        return { messageId, finalDate: '', messageState: MessageState.enroute, errorCode: 0 };
      }
      const { messageState, status } =
        states.find((s) => s.messageState !== MessageState.delivered) ?? states[0];
      return {
        messageId,
        finalDate: smppAbsoluteTime(Math.max(...states.map((s) => s.updatedAt))),
        messageState,
        // The DLR status of a message that was not delivered, as a receipt's err: gives it.
        errorCode: messageState !== MessageState.delivered ? (status ?? 0) & 0xff : 0,
      };
    },

    /** Receipts and replies waiting for the users given (those with a receiver or transceiver bind here). */
    pending(userIds: readonly number[], limit: number): Promise<SmppOutboxRow[]> {
      return smppMessagesRepo.pending(db, userIds, clock.now(), limit);
    },

    /** Rows a deliver_sm_resp acknowledged. */
    delivered(ids: readonly number[]): Promise<void> {
      return smppMessagesRepo.deleteOutbox(db, ids);
    },

    /**
     * The prune job's tasks: outbox rows past DLR_WAIT, and marks of campaigns (and their parts' ids) older than
     * `before`.
     */
    pruneOutbox: (limit: number) => smppMessagesRepo.pruneOutbox(db, clock.now(), limit),
    pruneSubmits: (before: number, limit: number) => smppMessagesRepo.pruneSubmits(db, before, limit),
    pruneParts: (before: number, limit: number) => smppMessagesRepo.pruneParts(db, before, limit),

    /** A number's erasure (GDPR): the receipts and replies about it still waiting, in the erasure's transaction. */
    async eraseNumber(tx: Executor, erasure: Erasure): Promise<ErasedCounts> {
      return { smpp_outbox: await smppMessagesRepo.eraseNumber(tx, erasure.number, erasure.accountIds) };
    },
  };
}

// Replies from handsets: the parts of a long reply until the last one comes, the account and campaign a reply
// belongs to, its keyword (STOP blacklists the number, START takes it off, HELP is answered), the `replies`
// row and its MO or STOP event, written together in one transaction.
import { replyPayload } from '../events/event-bodies.ts';
import type { Clock } from '../shared/clock.ts';
import { zonedTime } from '../shared/zoned-time.ts';
import type { Db, Executor } from '../store/db.ts';
import type { NewEvent } from '../store/outbox.ts';
import type { NumberLists } from './delivery.service.ts';
import { type ClaimedMessage, messagesRepo } from './messages.repo.ts';
import { appendEventsTelling, type EventsWritten } from './outbox-append.ts';
import { type ReplyType, repliesRepo } from './replies.repo.ts';
import { answerSender, type KeywordLists, keywordMatcher } from './reply-keywords.ts';
import type { InboundMessage } from './transport.ts';

/**
 * Free messages from the service itself (the answer to a HELP), queued inside the reply's transaction by the
 * campaigns capability as balance alert SMS are: a campaign of the account costing nothing.
 */
export interface AnswerSms {
  queue(tx: Executor, accountId: number, number: string, text: string, sender: string): Promise<unknown>;
}

export interface RecordedReply {
  type: ReplyType;
  accountId: number;
  text: string;
  /** A START (taken off the blacklist) or HELP, recorded as MO; absent for any other reply. */
  keyword?: 'START' | 'HELP';
  /** For a HELP: whether this reply was answered (false: no HELP_TEXT, or answered within the interval). */
  answered?: boolean;
}

export interface RepliesOptions {
  timezone: string;
  /** STOP_KEYWORDS, START_KEYWORDS and HELP_KEYWORDS. */
  keywords: KeywordLists;
  /**
   * The answer to a HELP (HELP_TEXT; none: not answered), at most one per number and account within
   * `intervalMs`, from the number replied to or else `fallbackSender` (ALERT_SENDER).
   */
  help: { text: string | undefined; intervalMs: number; fallbackSender: string };
}

export type RepliesService = ReturnType<typeof createRepliesService>;

/** Parts of a reply that never completed are dropped after a day. */
const fragmentTtlMs = 86_400_000;

export function createRepliesService(deps: {
  db: Db;
  clock: Clock;
  numberLists: Pick<NumberLists, 'addToBlacklist' | 'removeFromBlacklist'>;
  answers: AnswerSms;
  options: RepliesOptions;
  /** Told of the reply's event in its transaction (the SMPP server's replies to its users). */
  eventsWritten?: EventsWritten;
}) {
  const { db, clock, options } = deps;
  const appendEvents = appendEventsTelling(deps.eventsWritten);
  const keywordOf = keywordMatcher(options.keywords);

  // Events are dated to the second: formatted once per second.
  const dates = zonedTime(options.timezone);

  /** A reply's MO or STOP event: its text, the number, the account and the gsmsmsid of the message it answered. */
  function replyEvent(
    last: Pick<ClaimedMessage, 'account_id' | 'campaign_id' | 'gsmsmsid'>,
    type: ReplyType,
    from: string,
    text: string,
    now: number,
  ): NewEvent {
    return {
      account_id: last.account_id,
      campaign_id: last.campaign_id,
      type,
      payload: replyPayload(dates.isoSecond(now), text, from, last.account_id, last.gsmsmsid),
    };
  }

  /**
   * Takes every part of a reply if all have arrived, and records it; the delete decides who takes them. The
   * reply came in on `connector` (the part that completed it), else on the connector its stored parts name
   * (the sweep completing it later).
   */
  async function takeReply(
    tx: Executor,
    from: string,
    to: string,
    ref: number,
    total: number,
    now: number,
    connector?: string,
  ) {
    const fragments = await repliesRepo.fragments(tx, from, to, ref);
    if (fragments.length < total) return undefined;
    if ((await repliesRepo.deleteFragments(tx, from, to, ref)) < total) return undefined;
    const via = connector ?? fragments.find((f) => f.connector !== null)?.connector ?? undefined;
    return completeReply(tx, from, to, fragments.map((f) => f.text).join(''), now, via);
  }

  /**
   * The account a reply belongs to: the one that last wrote to the number through the connector the reply came
   * in on (a carrier's number answers for the accounts that send through it), else, when no message went
   * through that connector (or the transport names none), the one that last wrote to it at all.
   */
  async function lastMessageFor(tx: Executor, from: string, connector: string | undefined) {
    const through =
      connector === undefined ? undefined : await messagesRepo.lastMessageTo(tx, from, connector);
    return through ?? messagesRepo.lastMessageTo(tx, from);
  }

  /** Queues the HELP answer unless one went to the number for the account within the interval. */
  async function answerHelp(tx: Executor, accountId: number, from: string, to: string, now: number) {
    const { text, intervalMs, fallbackSender } = options.help;
    if (text === undefined) return false;
    if (!(await repliesRepo.claimHelpAnswer(tx, accountId, from, now, now - intervalMs))) return false;
    await deps.answers.queue(tx, accountId, from, text, answerSender(to, fallbackSender));
    return true;
  }

  async function completeReply(
    tx: Executor,
    from: string,
    to: string,
    text: string,
    now: number,
    connector: string | undefined,
  ): Promise<RecordedReply | undefined> {
    const last = await lastMessageFor(tx, from, connector);
    if (!last) return undefined;
    const keyword = keywordOf(text);
    const type = keyword === 'STOP' ? 'STOP' : 'MO';
    // The list change, the HELP answer, the reply and its event: one transaction.
    let answered: boolean | undefined;
    if (keyword === 'STOP')
      await deps.numberLists.addToBlacklist(tx, last.account_id, from, last.campaign_id);
    else if (keyword === 'START') await deps.numberLists.removeFromBlacklist(tx, last.account_id, from);
    else if (keyword === 'HELP') answered = await answerHelp(tx, last.account_id, from, to, now);
    // The reply for the campaign's reads, and its event for the webhooks: one transaction.
    await repliesRepo.insertReply(tx, {
      account_id: last.account_id,
      campaign_id: last.campaign_id,
      type,
      number: from,
      text,
      gsmsmsid: last.gsmsmsid,
      received_at: now,
    });
    const events = [replyEvent(last, type, from, text, now)];
    await appendEvents(tx, events, now);
    if (keyword === 'START') return { type, accountId: last.account_id, text, keyword };
    if (keyword === 'HELP') return { type, accountId: last.account_id, text, keyword, answered };
    return { type, accountId: last.account_id, text };
  }

  return {
    /**
     * A reply from a handset: parts of a long reply wait until all have come; the whole reply goes to the
     * account that last wrote to the number through the connector it came in on (else through any), as MO, or
     * as STOP (and the number is blacklisted) for a stop word. A START takes the number off the blacklist and
     * a HELP is answered with HELP_TEXT; both are MO. Returns what was recorded, or undefined while parts are
     * missing or when nobody wrote to the number.
     */
    async recordInbound(message: InboundMessage): Promise<RecordedReply | undefined> {
      const now = clock.now();
      const from = message.from.replace(/^\+|^00/, '');
      return db.transaction().execute(async (tx) => {
        const { connector } = message;
        if (!message.part || message.part.total <= 1)
          return completeReply(tx, from, message.to, message.text, now, connector);
        const { ref, total, seq } = message.part;
        await repliesRepo.insertFragment(
          tx,
          {
            sender: from,
            recipient: message.to,
            ref,
            total,
            seq,
            text: message.text,
            connector: connector ?? null,
          },
          now,
        );
        return takeReply(tx, from, message.to, ref, total, now, connector);
      });
    },

    /**
     * Completes replies whose last parts arrived in transactions that could not see each other (PostgreSQL,
     * several workers), drops parts of replies that never completed within a day, and forgets HELP answers
     * older than their interval.
     */
    async assembleWaitingReplies(): Promise<number> {
      const now = clock.now();
      return db.transaction().execute(async (tx) => {
        const groups = await repliesRepo.completeFragmentGroups(tx, 100);
        for (const g of groups) await takeReply(tx, g.sender, g.recipient, g.ref, g.total, now);
        await repliesRepo.deleteFragmentsBefore(tx, now - fragmentTtlMs);
        await repliesRepo.deleteHelpAnswersBefore(tx, now - options.help.intervalMs);
        return groups.length;
      });
    },
  };
}

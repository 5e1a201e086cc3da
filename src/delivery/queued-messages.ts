// What a send hands delivery to queue: its messages as the campaign rendered and priced them, and their rows.
import type { Encoding } from '../sms/segments.ts';

/** A message to queue, as the campaign that sends it rendered and priced it. */
export interface NewMessage {
  /** Position of the recipient in the campaign, 0-based: links point at (campaign, seq). */
  seq: number;
  recipient: string;
  gsmsmsid: string | null;
  contactId: number | null;
  text: string;
  parts: number;
  encoding: Encoding;
  /** What the message is charged: its parts × its destination's price (0 for a free message). */
  credits: number;
  /** When it is due, if not at its campaign's due time: a paced account's messages are spread (limits). */
  dueAt?: number;
}

/** The campaign a send's messages belong to, as `enqueue` stores them. */
export interface QueuedCampaign {
  id: number;
  accountId: number;
  dueAt: number;
  /** Held for moderation: its messages are stored `held`, never claimed until the operator approves them. */
  held?: boolean;
}

/** A campaign's new messages as rows of `insertMessages`, queued at the campaign's due time. */
export function messageRows(
  campaign: QueuedCampaign,
  messages: readonly NewMessage[],
  now: number,
): unknown[][] {
  const { id, accountId, dueAt } = campaign;
  const state = campaign.held ? 'held' : 'queued';
  const rows: unknown[][] = new Array(messages.length);
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    rows[i] = [
      id,
      m.seq,
      accountId,
      m.recipient,
      m.gsmsmsid,
      m.contactId,
      m.text,
      m.parts,
      m.encoding,
      state,
      m.dueAt ?? dueAt,
      now,
      m.credits,
    ];
  }
  return rows;
}

// What a balance alert says: the BALANCE_ALERT webhook body (the event vocabulary's), and the e-mail and SMS
// made from it.
import type { BalanceAlertBody } from '../events/event-bodies.ts';

/** The BALANCE_ALERT body: the balance after the debit, the account's trigger, and when (`Y-m-d H:i:s`). */
export type BalanceAlert = BalanceAlertBody;

export const parseAlert = (payload: string): BalanceAlert => JSON.parse(payload) as BalanceAlert;

const credits = (n: number) => `${n} credit${n === 1 || n === -1 ? '' : 's'}`;

export function alertEmail(alert: BalanceAlert, accountId: number): { subject: string; text: string } {
  return {
    subject: `Pigeon: your balance is ${credits(alert.balance)} (alert threshold ${alert.trigger})`,
    text: [
      `The balance of your Pigeon account ${accountId} is ${credits(alert.balance)}, at or below the alert threshold of ${credits(alert.trigger)} (${alert.date}).`,
      '',
      'Add credits to keep sending. This alert is sent once; it is sent again after the balance rises above the threshold and falls back to it.',
      '',
    ].join('\n'),
  };
}

/** Short and in GSM-7, so the free SMS is a single part. */
export const alertSmsText = (alert: BalanceAlert): string =>
  `Pigeon: your balance is ${credits(alert.balance)}, at or below your alert threshold of ${alert.trigger}.`;

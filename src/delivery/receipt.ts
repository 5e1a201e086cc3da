// Delivery receipts: the `id:… stat:… err:…` text of SMPP 3.4 Appendix B, or the receipted_message_id and
// message_state TLVs, and what each state means for the DLR status codes of API.md.
import { DlrStatus } from '../sms/dlr-status.ts';
import type { Receipt } from './transport.ts';

/** message_state TLV values to the receipt text's stat words. */
const stateWords: Record<number, string> = {
  1: 'ENROUTE',
  2: 'DELIVRD',
  3: 'EXPIRED',
  4: 'DELETED',
  5: 'UNDELIV',
  6: 'ACCEPTD',
  7: 'UNKNOWN',
  8: 'REJECTD',
};

/**
 * Reads a receipt from a deliver_sm: the TLVs win when present, the text fills the gaps. Returns undefined
 * when neither carries an id and a state.
 */
export function parseReceipt(
  text: string,
  tlvs: { receiptedMessageId?: unknown; messageState?: unknown },
): Receipt | undefined {
  const fields = new Map<string, string>();
  for (const m of text.matchAll(/(\w+(?: \w+)?):(\S*)/g)) fields.set(m[1].toLowerCase(), m[2]);
  const tlvId =
    typeof tlvs.receiptedMessageId === 'string' ? tlvs.receiptedMessageId.replace(/\0+$/, '') : undefined;
  const smscId = tlvId || fields.get('id');
  const tlvState = typeof tlvs.messageState === 'number' ? stateWords[tlvs.messageState] : undefined;
  const stat = (tlvState ?? fields.get('stat') ?? '').toUpperCase();
  if (!smscId || !stat) return undefined;
  const err = fields.get('err');
  return { smscId, stat, err: err && /^\d+$/.test(err) ? err : null };
}

/** True for the states after which nothing more will come. */
export const isFinalStat = (stat: string): boolean => stat !== 'ENROUTE' && stat !== 'ACCEPTD';

/**
 * The DLR status of a final receipt. `npaiErrors` are the network error codes meaning the number does not
 * exist (GSM MAP "unknown subscriber" is 001): such a receipt is an invalid destination.
 */
export function dlrStatusOf(receipt: Receipt, npaiErrors: ReadonlySet<string>): number {
  if (receipt.err !== null && npaiErrors.has(receipt.err.padStart(3, '0')) && receipt.stat !== 'DELIVRD') {
    return DlrStatus.invalidDestination;
  }
  switch (receipt.stat) {
    case 'DELIVRD':
      return DlrStatus.delivered;
    case 'EXPIRED':
      return DlrStatus.expired;
    case 'REJECTD':
      return DlrStatus.rejected;
    case 'ENROUTE':
    case 'ACCEPTD':
      return DlrStatus.sent;
    default:
      return DlrStatus.notDelivered;
  }
}

/** Message ids compare equal whether an SMSC wrote them in hex in one place and decimal in another. */
export function smscIdForms(id: string): string[] {
  const forms = new Set([id]);
  if (/^\d{1,15}$/.test(id)) forms.add(Number(id).toString(16));
  if (/^[0-9a-fA-F]{1,12}$/.test(id)) {
    forms.add(id.toLowerCase());
    forms.add(String(Number.parseInt(id, 16)));
  }
  return [...forms];
}

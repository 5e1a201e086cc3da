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

const isSpace = (code: number) => code === 32 || (code >= 9 && code <= 13);

/**
 * Where the field `name` (`id:`, `stat:`, `text:`…) of a receipt's text starts: its first occurrence before
 * `end` that starts the text or follows white space; -1 when there is none. `lower` is the text in lower case.
 */
function fieldStart(lower: string, name: string, end: number): number {
  for (let at = lower.indexOf(name); at !== -1 && at < end; at = lower.indexOf(name, at + 1)) {
    if (at === 0 || isSpace(lower.charCodeAt(at - 1))) return at;
  }
  return -1;
}

/**
 * The value of the field `name` up to the next white space, read before `end` (where the free `text:` field
 * starts, which may hold anything). Read by hand, not by a regular expression over every field: this runs
 * for every receipt.
 */
function fieldOf(text: string, lower: string, name: string, end: number): string | undefined {
  const at = fieldStart(lower, name, end);
  if (at === -1) return undefined;
  let to = at + name.length;
  while (to < text.length && !isSpace(text.charCodeAt(to))) to++;
  return text.slice(at + name.length, to);
}

/**
 * Reads a receipt from a deliver_sm: the TLVs win when present, the text fills the gaps. Returns undefined
 * when neither carries an id and a state.
 */
export function parseReceipt(
  text: string,
  tlvs: { receiptedMessageId?: unknown; messageState?: unknown },
): Receipt | undefined {
  const lower = text.toLowerCase();
  const free = fieldStart(lower, 'text:', lower.length);
  const end = free === -1 ? text.length : free;
  const tlvId =
    typeof tlvs.receiptedMessageId === 'string' ? tlvs.receiptedMessageId.replace(/\0+$/, '') : undefined;
  const smscId = tlvId || fieldOf(text, lower, 'id:', end);
  const tlvState = typeof tlvs.messageState === 'number' ? stateWords[tlvs.messageState] : undefined;
  const stat = (tlvState ?? fieldOf(text, lower, 'stat:', end) ?? '').toUpperCase();
  if (!smscId || !stat) return undefined;
  const err = fieldOf(text, lower, 'err:', end);
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

// What an SMSC's submit_sm_resp command_status means for a message: try again later, or a final DLR status.
import { DlrStatus } from '../../sms/dlr-status.ts';

const temporary = new Set([
  0x08, // ESME_RSYSERR
  0x14, // ESME_RMSGQFUL
  0x58, // ESME_RTHROTTLED
  0x64, // ESME_RX_T_APPN
  0xfe, // ESME_RDELIVERYFAILURE: the SMSC could not deliver now
]);

/** Statuses after which the connection should slow down before the next submit. */
export const isBackpressure = (status: number): boolean => status === 0x14 || status === 0x58;

export function classifySubmitStatus(status: number): { retry: boolean; dlrStatus: number; error: string } {
  const error = `command_status 0x${status.toString(16).padStart(8, '0')}`;
  if (temporary.has(status)) return { retry: true, dlrStatus: DlrStatus.sent, error };
  switch (status) {
    case 0x0b: // ESME_RINVDSTADR
    case 0x50: // ESME_RINVDSTTON
    case 0x51: // ESME_RINVDSTNPI
      return { retry: false, dlrStatus: DlrStatus.invalidDestination, error };
    case 0x0a: // ESME_RINVSRCADR
    case 0x48: // ESME_RINVSRCTON
    case 0x49: // ESME_RINVSRCNPI
      return { retry: false, dlrStatus: DlrStatus.invalidSender, error };
    case 0x101: // ESME_RPROHIBITED
    case 0x100: // ESME_RSERTYPUNAUTH
      return { retry: false, dlrStatus: DlrStatus.notAllowed, error };
    default:
      return { retry: false, dlrStatus: DlrStatus.rejected, error };
  }
}

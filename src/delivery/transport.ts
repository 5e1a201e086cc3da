// The seam between the delivery worker and a carrier: the SMPP client or the built-in simulator.

/** One SMS part as it goes on the wire. */
export interface OutboundPart {
  destination: string;
  /** Alphanumeric or numeric sender; null lets the SMSC choose. */
  sender: string | null;
  /** data_coding: 0 for GSM-7 (unpacked septets), 8 for UCS-2. */
  dataCoding: 0 | 8;
  /** Concatenation header for a part of a long message; absent for a single SMS. */
  udh?: Uint8Array;
  payload: Uint8Array;
  /**
   * The message the part belongs to, for the router (src/delivery/routing/): it picks the route by account,
   * pushtype and country, and sends every part of one message (same `messageId`) through one connector.
   */
  context?: { messageId: number; accountId: number; pushtype: string; country?: string };
}

export type SubmitOutcome =
  /** `connector` and `route`: the names of what carried it, set by the router. */
  | { ok: true; smscId: string; connector?: string; route?: string }
  /**
   * `retry`: a temporary refusal (throttled, queue full, connection lost); else final with its DLR status.
   * `commandStatus`: the SMSC's submit_sm_resp status, when an SMSC refused it (the router decides on it).
   * `noRoute`: set by the router when no route takes the message, so nothing was sent anywhere.
   */
  | {
      ok: false;
      retry: boolean;
      dlrStatus: number;
      error: string;
      commandStatus?: number;
      noRoute?: true;
    };

/** A delivery receipt, from the receipt text or the TLVs. */
export interface Receipt {
  smscId: string;
  /** SMPP state word: DELIVRD, UNDELIV, EXPIRED, REJECTD, DELETED, UNKNOWN, ACCEPTD, ENROUTE. */
  stat: string;
  /** Network error code from `err:` (three digits), when given. */
  err: string | null;
  /** The connector it came in on, set by the router. */
  connector?: string;
}

/** A message from a handset (MO), possibly one part of a concatenated message. */
export interface InboundMessage {
  from: string;
  to: string;
  text: string;
  /** Concatenation info when this is one part of a longer message. */
  part?: { ref: number; total: number; seq: number };
  /** The connector it came in on, set by the router. */
  connector?: string;
}

export interface InboundHandler {
  /** Must have persisted the receipt when it resolves: the SMSC is acknowledged only then. */
  onReceipt(receipt: Receipt): Promise<void>;
  onInbound(message: InboundMessage): Promise<void>;
}

export interface Transport {
  readonly name: string;
  /** Submits that may be in flight at once over every connection (binds × window for SMPP). */
  readonly capacity: number;
  start(handler: InboundHandler): Promise<void>;
  /** True when at least one connection can take a submit now. */
  ready(): boolean;
  /**
   * Submits one part. `mayWrite`, when given, is asked just before the part goes on the wire (after any wait
   * for a window slot or the throughput limit): false leaves it unsent, answered as a retry. The delivery
   * worker passes whether it still holds the message's lease term.
   */
  submit(part: OutboundPart, mayWrite?: () => boolean): Promise<SubmitOutcome>;
  stop(): Promise<void>;
}

// What one SMPP connector is configured with, and the metrics it reports to: the public face of
// `smpp-transport.ts`, shared with its binds.

/** `transceiver`: one connection per bind does both; `transmitter-receiver`: two, submits on the first. */
export type BindMode = 'transceiver' | 'transmitter-receiver';

export interface SmppTransportOptions {
  /** The connector's name, in every log line and metric; `default` when not given. */
  name?: string;
  /** smpp://system_id:password@host:port, or ssmpp://… for SMPP over TLS. */
  url: string;
  /**
   * For an ssmpp:// URL: `caFile`, the certificate authorities to trust (PEM, read when the transport is
   * created; Node's own list without it); `checkServerName` false accepts a certificate that does not name
   * the host, still verifying its chain against the CA.
   */
  tls?: { caFile?: string; checkServerName: boolean };
  /** `transceiver` when not given. */
  bindMode?: BindMode;
  /** Bind slots: with `transmitter-receiver`, each is a transmitter and a receiver connection. */
  binds: number;
  window: number;
  /** Parts per second over all binds; 0 for no limit. */
  tps: number;
  systemType?: string;
  /**
   * TON and NPI of the destination, and of a numeric sender (an alphanumeric one is always 5/0). 1/1
   * (international, E.164) when not given: Pigeon stores numbers with their country code.
   */
  defaultTon?: number;
  defaultNpi?: number;
  enquireLinkMs: number;
  responseTimeoutMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  /** Times a throttled or queue-full part is offered again before the worker is told to retry later. */
  backpressureRetries: number;
  /**
   * How long connecting and binding may take before the attempt is abandoned (the socket closed, a warning
   * logged) and retried with the reconnection backoff: an SMSC that accepts the connection but never answers
   * the bind would otherwise hold the bind down in silence. 10 s when not given.
   */
  bindTimeoutMs?: number;
}

/** The options' earlier name. */
export type SmppOptions = SmppTransportOptions;

/** Told of throttling and reconnections, for the operator's metrics (src/ops), by connector name. */
export interface SmppMetrics {
  throttled(connector: string): void;
  reconnecting(connector: string): void;
}

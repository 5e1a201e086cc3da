// The connectors file (CONNECTORS_FILE) as a TypeBox schema: its connectors, its routes and the senders'
// limits, every field with its type, bounds and default. A single value where a list is expected is read as a
// list of one. What a schema cannot say (a route naming an unknown connector, a name given twice, the parts of
// an smpp:// URL, keys of the other kind of connector) is checked after it by `connectors-file.ts`; the
// defaults that come from the environment (SMPP_*, SIM_*) are filled in there too.
import Type, { type Static, type TSchema } from 'typebox';

const name = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$' });
const integer = (minimum: number, maximum: number) => Type.Integer({ minimum, maximum });
const withDefault = (minimum: number, maximum: number, fallback: number) =>
  Type.Integer({ minimum, maximum, default: fallback });
/** Any of these values; one alone is a list of one. */
const anyOf = <T extends TSchema>(item: T) => Type.Array(item, { minItems: 1 });

/** The keys only a connector over SMPP (an smpp:// or ssmpp:// URL) has. */
const smppProperties = {
  binds: withDefault(1, 32, 1),
  bindMode: Type.Enum(['transceiver', 'transmitter-receiver'], { default: 'transceiver' }),
  window: withDefault(1, 1000, 10),
  systemType: Type.String({ maxLength: 12, default: '' }),
  defaultTon: Type.Optional(integer(0, 6)),
  defaultNpi: Type.Optional(integer(0, 18)),
  enquireLinkMs: Type.Optional(integer(1000, 3_600_000)),
  responseTimeoutMs: Type.Optional(integer(100, 600_000)),
  bindTimeoutMs: Type.Optional(integer(100, 600_000)),
  /** Only for ssmpp://: the CA to trust (relative to the connectors file) and whether the certificate must name the host. */
  tls: Type.Optional(
    Type.Object(
      {
        caFile: Type.Optional(Type.String({ minLength: 1 })),
        checkServerName: Type.Boolean({ default: true }),
      },
      { additionalProperties: false },
    ),
  ),
};

/** The keys only the simulator (`url: simulator`) has. */
const simulatorProperties = {
  dlrDelayMs: Type.Optional(integer(0, 86_400_000)),
  /** `DELIVRD=97,UNDELIV=3` as SIM_OUTCOMES, or a map of stat to weight. */
  outcomes: Type.Optional(Type.Union([Type.String(), Type.Record(Type.String(), Type.Number())])),
};

export const smppKeys = Object.keys(smppProperties);
export const simulatorKeys = Object.keys(simulatorProperties);

const ConnectorSchema = Type.Object(
  {
    name,
    /** `smpp://system_id:password@host:port`, `ssmpp://…` for TLS, or the word `simulator`. */
    url: Type.String({ minLength: 1 }),
    /** Parts per second this connector may submit; 0 for no limit. */
    tps: withDefault(0, 1_000_000, 0),
    ...smppProperties,
    ...simulatorProperties,
  },
  { additionalProperties: false },
);

/** What a route looks at; an absent criterion accepts everything, a given one any of its values. */
const MatchSchema = Type.Object(
  {
    /** Destination prefixes, digits with the country code first (`336`, `+336`, `00336`). */
    prefix: Type.Optional(anyOf(Type.String({ pattern: '^\\s*(\\+|00)?\\d{1,15}\\s*$' }))),
    /** ISO 3166-1 alpha-2 codes of the destination, in any case. */
    country: Type.Optional(anyOf(Type.String({ pattern: '^\\s*[A-Za-z]{2}\\s*$' }))),
    /** Sender IDs, compared without case. */
    sender: Type.Optional(anyOf(Type.String())),
    pushtype: Type.Optional(anyOf(Type.Enum(['alert', 'marketing']))),
    /** Account ids. */
    account: Type.Optional(anyOf(integer(1, Number.MAX_SAFE_INTEGER))),
  },
  { additionalProperties: false },
);

const weight = Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000 });

const RouteSchema = Type.Object(
  {
    name,
    match: Type.Optional(MatchSchema),
    /** Connector names, in failover order. */
    connectors: Type.Array(Type.String(), { minItems: 1 }),
    strategy: Type.Enum(['failover', 'weighted'], { default: 'failover' }),
    /**
     * Only for `weighted`: one weight per connector in the order of `connectors`, or a map of connector name
     * to weight where a connector left out weighs 1.
     */
    weights: Type.Optional(Type.Union([Type.Array(weight), Type.Record(Type.String(), weight)])),
  },
  { additionalProperties: false },
);

export const ConnectorsFileSchema = Type.Object(
  {
    connectors: Type.Array(ConnectorSchema, { minItems: 1 }),
    /** In order: a message takes the first route that matches it; a route without match takes every message. */
    routes: Type.Array(RouteSchema, { minItems: 1 }),
    /** Parts per second per sender ID (compared without case). */
    senders: Type.Optional(Type.Record(Type.String(), integer(1, 1_000_000))),
    /** Parts per second of a sender not in `senders`; 0 for no limit. */
    defaultSenderTps: withDefault(0, 1_000_000, 0),
  },
  { additionalProperties: false },
);

export type ConnectorsFile = Static<typeof ConnectorsFileSchema>;
export type ConnectorEntry = ConnectorsFile['connectors'][number];
export type RouteEntry = ConnectorsFile['routes'][number];

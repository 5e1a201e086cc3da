// What the limits' routes answer (limits.routes.ts). Imports nothing but typebox and other schema files.
import Type, { type Static } from 'typebox';
import { answer, Id, Nullable, StringEnum } from '../http/response-schemas.ts';

const from = StringEnum(['account', 'parent', 'instance'], {
  description:
    "whose value applies: the account's own, its parent's, or the instance's default (environment)",
});
const number = (description: string) =>
  Type.Object({ value: Type.Integer({ description: `${description}; 0: no limit` }), from });

const effective = Type.Object({
  daily_messages: number('messages (recipients kept) the account may have accepted per day of the time zone'),
  monthly_messages: number('messages the account may have accepted per month of the time zone'),
  requests_per_second: Type.Object({
    value: Type.Integer({ description: 'API requests per second; 0: no limit' }),
    from,
    counted: StringEnum(['per token', 'per account'], {
      description:
        "the instance's default counts each API token alone; an account's own, all its tokens together",
    }),
  }),
  parts_per_second: number("SMS parts per second the account's messages leave at (paced, never refused)"),
  countries: Type.Object({
    value: Type.String({ description: 'the ISO countries recipients may be in (FR,BE), or all' }),
    from,
  }),
});

/** GET /account/limits: the caller's effective limits. */
export const AccountLimitsAnswer = answer({ limits: effective });
export type EffectiveLimitsView = Static<typeof effective>;

const own = Type.Object({
  daily_messages: Nullable(Type.Integer()),
  monthly_messages: Nullable(Type.Integer()),
  requests_per_second: Nullable(Type.Integer()),
  parts_per_second: Nullable(Type.Integer()),
  countries: Nullable(Type.String()),
});

const operatorView = Type.Object({
  account_id: Id,
  parent_id: Nullable(Type.String({ pattern: '^[0-9]+$' })),
  own,
  limits: effective,
});

/** The operator's view of an account's limits: its own values (null: inherited) and the effective ones. */
export const OperatorLimitsAnswer = answer({ account: operatorView });
export type OperatorLimitsView = Static<typeof operatorView>;

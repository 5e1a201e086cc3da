// What POST /lookup answers (lookup.routes.ts); `LookupResultView` is one number's answer, what a lookup
// provider gives (lookup-result.ts). Imports nothing but typebox and other schema files.
import Type, { type Static } from 'typebox';
import { answer, Nullable } from '../http/response-schemas.ts';

const text = Type.String();

/** One number's lookup answer, in SMSFactor's shape. */
export const LookupResult = Type.Object({
  to: text,
  mccMnc: text,
  imsi: text,
  originalNetwork: Type.Object({
    networkName: text,
    networkPrefix: text,
    countryName: text,
    countryPrefix: text,
  }),
  ported: Nullable(Type.Boolean({ description: 'null when it cannot be told' })),
  roaming: Nullable(Type.Boolean({ description: 'null when it cannot be told' })),
  countryCode: Type.String({ description: 'ISO 3166 alpha-2 (Pigeon addition)' }),
  numberType: Type.String({ description: 'MOBILE, FIXED_LINE… (Pigeon addition)' }),
  status: Type.Object({ name: text, description: text, detailed: text }),
  error: Type.Object({ id: Type.Integer(), description: text, permanent: Type.Boolean() }),
});
export type LookupResultView = Static<typeof LookupResult>;

export const LookupAnswer = answer({
  cost: Type.Integer({ description: 'credits charged' }),
  credits: Type.Integer({ description: 'the balance after' }),
  response: Type.Object({ lookup: Type.Array(LookupResult) }),
});

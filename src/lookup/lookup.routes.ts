import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { answer, Nullable } from '../http/response-schemas.ts';
import { type App, caller } from '../http/types.ts';
import type { LookupService } from './lookup.service.ts';

// `to` is an array in JSON; XML gives one `<to>` as a string and several as an array: the service takes both.
const LookupBody = Type.Object({
  lookup: Type.Object({ to: Type.Optional(Type.Unknown()) }),
});

const text = Type.String();
const LookupAnswer = answer({
  cost: Type.Integer({ description: 'credits charged' }),
  credits: Type.Integer({ description: 'the balance after' }),
  response: Type.Object({
    lookup: Type.Array(
      Type.Object({
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
      }),
    ),
  }),
});

export function lookupRoutes(app: App, lookups: LookupService): void {
  app.post('/lookup', { schema: { body: LookupBody, response: LookupAnswer } }, async (req) =>
    ok(await lookups.lookup(caller(req), req.body.lookup)),
  );
}

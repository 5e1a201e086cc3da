import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { answer, Id } from '../http/response-schemas.ts';
import { type App, caller } from '../http/types.ts';
import { type EraseService, erasedKinds } from './erase.service.ts';

// The number goes in the body, never in the path: paths end up in proxies' and access logs.
const EraseBody = Type.Object({
  erase: Type.Object({
    number: Type.Optional(
      Type.Unknown({ description: 'the phone number, as sends take it: 33612345678, +33 6 12 34 56 78' }),
    ),
  }),
});

const count = Type.Integer({ minimum: 0 });
const EraseAnswer = answer({
  number: Type.String({ description: 'the number erased, normalized', examples: ['33612345678'] }),
  accounts: Type.Array(Id, { description: "the caller's account and its direct sub-accounts" }),
  removed: Type.Object(Object.fromEntries(erasedKinds.map((kind) => [kind, count])), {
    description: 'rows deleted or overwritten, per kind',
  }),
});

export function eraseRoutes(app: App, erase: EraseService): void {
  app.post('/erase', { schema: { body: EraseBody, response: EraseAnswer } }, async (req) =>
    ok(await erase.eraseForAccount(caller(req), req.body.erase)),
  );
}

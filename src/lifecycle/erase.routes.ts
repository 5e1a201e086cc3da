import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { type App, caller } from '../http/types.ts';
import { EraseAnswer } from './erase.schemas.ts';
import type { EraseService } from './erase.service.ts';

// The number goes in the body, never in the path: paths end up in proxies' and access logs.
const EraseBody = Type.Object({
  erase: Type.Object({
    number: Type.Optional(
      Type.Unknown({ description: 'the phone number, as sends take it: 33612345678, +33 6 12 34 56 78' }),
    ),
  }),
});

export function eraseRoutes(app: App, erase: EraseService): void {
  app.post('/erase', { schema: { body: EraseBody, response: EraseAnswer } }, async (req) =>
    ok(await erase.eraseForAccount(caller(req), req.body.erase)),
  );
}

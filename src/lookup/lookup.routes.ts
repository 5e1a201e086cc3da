import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { type App, caller } from '../http/types.ts';
import { LookupAnswer } from './lookup.schemas.ts';
import type { LookupService } from './lookup.service.ts';

// `to` is an array in JSON; XML gives one `<to>` as a string and several as an array: the service takes both.
const LookupBody = Type.Object({
  lookup: Type.Object({ to: Type.Optional(Type.Unknown()) }),
});

export function lookupRoutes(app: App, lookups: LookupService): void {
  app.post('/lookup', { schema: { body: LookupBody, response: LookupAnswer } }, async (req) =>
    ok(await lookups.lookup(caller(req), req.body.lookup)),
  );
}

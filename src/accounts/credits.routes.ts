import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { type App, caller } from '../http/types.ts';
import { CreditsAnswer, TransferAnswer } from './credits.schemas.ts';
import type { CreditsService } from './credits.service.ts';

const TransferBody = Type.Object({
  transfer: Type.Object({ to_account: Type.String(), credits: Type.String() }),
});

export function creditsRoutes(app: App, credits: CreditsService): void {
  app.get('/credits', { schema: { response: CreditsAnswer } }, async (req) =>
    ok(await credits.creditsView(caller(req))),
  );
  app.post('/account/transfer', { schema: { body: TransferBody, response: TransferAnswer } }, async (req) =>
    ok(await credits.transfer(caller(req), req.body.transfer)),
  );
}

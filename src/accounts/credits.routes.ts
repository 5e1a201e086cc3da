import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { answer } from '../http/response-schemas.ts';
import { type App, caller } from '../http/types.ts';
import type { CreditsService } from './credits.service.ts';

const TransferBody = Type.Object({
  transfer: Type.Object({ to_account: Type.String(), credits: Type.String() }),
});

export function creditsRoutes(app: App, credits: CreditsService): void {
  app.get(
    '/credits',
    {
      schema: {
        response: answer({
          credits: Type.Integer(),
          postpaid: Type.String({ examples: ['0'] }),
          unlimited: Type.String({ enum: ['0', '1'] }),
        }),
      },
    },
    async (req) => ok(await credits.creditsView(caller(req))),
  );
  app.post(
    '/account/transfer',
    {
      schema: {
        body: TransferBody,
        response: answer({
          credits: Type.Integer({ description: "the caller's credits after" }),
          child_credits: Type.Integer({ description: "the sub-account's credits after" }),
        }),
      },
    },
    async (req) => ok(await credits.transfer(caller(req), req.body.transfer)),
  );
}

import type { FastifyRequest } from 'fastify';
import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { type App, caller } from '../http/types.ts';
import { AccountLimitsAnswer, OperatorLimitsAnswer } from './limits.schemas.ts';
import type { LimitsService } from './limits.service.ts';

const IdParams = Type.Object({ id: Type.String() });
const value = (description: string) => Type.Optional(Type.Unknown({ description }));
const LimitsBody = Type.Object({
  limits: Type.Object({
    daily_messages: value('messages per day: a whole number, 0 for none, or "inherit"'),
    monthly_messages: value('messages per month: a whole number, 0 for none, or "inherit"'),
    requests_per_second: value('API requests per second, all its tokens together: 0 for none, or "inherit"'),
    parts_per_second: value('SMS parts per second its messages are paced to: 0 for none, or "inherit"'),
    countries: value('"FR,BE", "all", or "inherit"'),
  }),
});

/** The account's own limits (`GET /account/limits`), and the operator's routes for any account's. */
export function limitsRoutes(app: App, limits: LimitsService): void {
  app.get('/account/limits', { schema: { response: AccountLimitsAnswer } }, async (req) =>
    ok({ limits: await limits.accountLimits(caller(req)) }),
  );

  // Asked before the body is read: any other caller gets -1 whatever it sent.
  const operatorOnly = {
    preValidation: async (req: FastifyRequest) => limits.requireOperator(caller(req)),
    schema: { params: IdParams, response: OperatorLimitsAnswer },
  };
  app.get('/operator/accounts/:id/limits', operatorOnly, async (req) =>
    ok({ account: await limits.show(caller(req), req.params.id) }),
  );
  app.put(
    '/operator/accounts/:id/limits',
    { ...operatorOnly, schema: { ...operatorOnly.schema, body: LimitsBody } },
    async (req) => ok({ account: await limits.set(caller(req), req.params.id, req.body.limits) }),
  );
  app.delete('/operator/accounts/:id/limits', operatorOnly, async (req) =>
    ok({ account: await limits.clear(caller(req), req.params.id) }),
  );
}

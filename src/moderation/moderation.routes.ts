import type { FastifyRequest } from 'fastify';
import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { type App, caller } from '../http/types.ts';
import {
  ContentRuleAnswer,
  ContentRulesAnswer,
  DeletedRuleAnswer,
  HeldCampaignsAnswer,
  ModerationDecisionAnswer,
  OperatorAnswer,
  SenderIdAnswer,
  SenderIdsAnswer,
} from './moderation.schemas.ts';
import type { ModerationService } from './moderation.service.ts';

const SenderBody = Type.Object({
  sender: Type.Object({
    sender: Type.Optional(Type.Unknown({ description: 'the sender ID asked for' })),
    note: Type.Optional(
      Type.Unknown({ description: 'what it is for, for the operator (at most 500 characters)' }),
    ),
  }),
});
const IdParams = Type.Object({ id: Type.String() });
/** A refusal's body, `{"reason": "…"}`, is optional: a PUT without a body refuses without a reason. */
const reasonOf = (body: unknown): unknown =>
  typeof body === 'object' && body !== null ? (body as { reason?: unknown }).reason : undefined;
const RuleBody = Type.Object({
  rule: Type.Object({
    account_id: Type.Optional(
      Type.Unknown({ description: "the account (and its sub-accounts); absent: every account's" }),
    ),
    kind: Type.Optional(Type.Unknown({ description: 'domain, word or pattern' })),
    value: Type.Optional(Type.Unknown({ description: 'the domain, the word(s), or the regular expression' })),
    action: Type.Optional(
      Type.Unknown({ description: 'refuse (the send is -7) or hold (its campaign waits)' }),
    ),
  }),
});
const AfterQuery = Type.Object({ after: Type.Optional(Type.Integer({ minimum: 0 })) });

/** The account's sender ID requests, and the operator's routes (`/operator/*`, operator accounts only). */
export function moderationRoutes(app: App, moderation: ModerationService): void {
  app.post('/sender', { schema: { body: SenderBody, response: SenderIdAnswer } }, async (req) =>
    ok({ sender: await moderation.requestSender(caller(req), req.body.sender) }),
  );
  app.get('/sender', { schema: { response: SenderIdsAnswer } }, async (req) =>
    ok({ senders: await moderation.listSenders(caller(req)) }),
  );

  // Asked before the body or the query is read: any other caller gets -1 whatever it sent.
  const operatorOnly = {
    preValidation: async (req: FastifyRequest) => moderation.requireOperator(caller(req)),
  };
  const by = (req: FastifyRequest) => caller(req);

  app.get('/operator/me', { ...operatorOnly, schema: { response: OperatorAnswer } }, async () =>
    ok({ operator: true }),
  );
  app.get(
    '/operator/senders',
    {
      ...operatorOnly,
      schema: {
        querystring: Type.Object({
          state: Type.Optional(Type.String()),
          after: Type.Optional(Type.Integer({ minimum: 0 })),
        }),
        response: SenderIdsAnswer,
      },
    },
    async (req) =>
      ok({ senders: await moderation.operatorSenders(by(req), req.query.state, req.query.after) }),
  );
  app.put(
    '/operator/sender/:id/approve',
    { ...operatorOnly, schema: { params: IdParams, response: SenderIdAnswer } },
    async (req) => ok({ sender: await moderation.approveSender(by(req), req.params.id) }),
  );
  app.put(
    '/operator/sender/:id/refuse',
    { ...operatorOnly, schema: { params: IdParams, response: SenderIdAnswer } },
    async (req) => ok({ sender: await moderation.refuseSender(by(req), req.params.id, reasonOf(req.body)) }),
  );
  app.get(
    '/operator/rules',
    {
      ...operatorOnly,
      schema: {
        querystring: Type.Object({ account_id: Type.Optional(Type.String()) }),
        response: ContentRulesAnswer,
      },
    },
    async (req) => ok({ rules: await moderation.operatorRules(by(req), req.query.account_id) }),
  );
  app.post(
    '/operator/rule',
    { ...operatorOnly, schema: { body: RuleBody, response: ContentRuleAnswer } },
    async (req) => ok({ rule: await moderation.addRule(by(req), req.body.rule) }),
  );
  app.delete(
    '/operator/rule/:id',
    { ...operatorOnly, schema: { params: IdParams, response: DeletedRuleAnswer } },
    async (req) => ok(await moderation.deleteRule(by(req), req.params.id)),
  );
  app.get(
    '/operator/campaigns',
    { ...operatorOnly, schema: { querystring: AfterQuery, response: HeldCampaignsAnswer } },
    async (req) => ok({ campaigns: await moderation.heldCampaigns(by(req), req.query.after) }),
  );
  app.put(
    '/operator/campaign/:id/approve',
    { ...operatorOnly, schema: { params: IdParams, response: ModerationDecisionAnswer } },
    async (req) => ok({ campaign: await moderation.approveCampaign(by(req), req.params.id) }),
  );
  app.put(
    '/operator/campaign/:id/refuse',
    { ...operatorOnly, schema: { params: IdParams, response: ModerationDecisionAnswer } },
    async (req) =>
      ok({ campaign: await moderation.refuseCampaign(by(req), req.params.id, reasonOf(req.body)) }),
  );
}

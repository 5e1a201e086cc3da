// What the sends' routes answer (campaigns.routes.ts); `CampaignResultView` is what the console shows after
// a send or a simulation. Imports nothing but typebox and other schema files.
import Type, { type Static } from 'typebox';
import { answer, Id } from '../http/response-schemas.ts';

const count = Type.Integer();
const campaignResult = {
  ticket: Type.Optional({ ...Id, description: 'the campaign id (absent from a simulation)' }),
  cost: Type.Integer({ description: 'credits charged' }),
  credits: Type.Integer({ description: 'the balance after the send' }),
  total: Type.Integer({ description: 'recipients given' }),
  sent: Type.Integer({ description: 'recipients left after filtering' }),
  blacklisted: count,
  duplicated: count,
  invalid: count,
  npai: count,
  not_allowed: Type.Integer({ description: 'recipients in a country the configuration does not allow' }),
  moderation: Type.Optional(
    Type.Literal('pending', {
      description:
        "Pigeon's addition, only on a send a content rule held: its campaign waits for the operator (charged; refunded if refused)",
    }),
  ),
  held_by: Type.Optional(Type.String({ description: 'the content rule that held it and what matched' })),
};
/** What a send answers; a simulation has no `ticket`. */
export const CampaignResult = Type.Object(campaignResult);
export type CampaignResultView = Static<typeof CampaignResult>;

export const CampaignResultAnswer = answer(campaignResult);
export const CancelAnswer = answer({ credits: Type.Integer() });

// What the moderation routes answer (sender IDs, content rules, the moderation queue); each view's type is
// used by the moderation service and the console. Imports nothing but typebox and other schema files.
import Type, { type Static } from 'typebox';
import { answer, Id, Nullable, StringEnum, WallTime } from '../http/response-schemas.ts';

export const senderStates = ['pending', 'approved', 'refused'] as const;

/** A sender ID an account asked for, and what the operator decided. */
export const SenderId = Type.Object({
  id: Id,
  account_id: Id,
  sender: Type.String(),
  state: StringEnum(senderStates),
  note: Type.String({ description: "what the account said of it when asking ('' for nothing)" }),
  reason: Type.String({ description: "the operator's reason for a refusal ('' for none)" }),
  created_at: WallTime,
  decided_at: Nullable({ ...WallTime, description: 'null while pending' }),
});
export type SenderIdView = Static<typeof SenderId>;

export const ContentRule = Type.Object({
  id: Id,
  account_id: Nullable({ ...Id, description: "null: the instance's rule, for every account" }),
  kind: StringEnum(['domain', 'word', 'pattern'] as const),
  value: Type.String(),
  action: StringEnum(['refuse', 'hold'] as const),
  created_at: WallTime,
});
export type ContentRuleView = Static<typeof ContentRule>;

/** A campaign held for moderation, as the operator's queue shows it. */
export const HeldCampaign = Type.Object({
  id: Id,
  account_id: Id,
  sender: Type.String(),
  text: Type.String(),
  cost: Type.Integer(),
  sent: Type.Integer({ description: 'its messages, held' }),
  date: WallTime,
  creation_date: WallTime,
  held_by: Type.String({ description: 'the rule that held it and what matched' }),
});
export type HeldCampaignView = Static<typeof HeldCampaign>;

export const ModerationDecision = Type.Object({
  id: Id,
  status: StringEnum(['approved', 'refused'] as const),
  messages: Type.Integer({ description: 'messages queued (approved) or cancelled (refused)' }),
  refunded: Type.Integer({ description: 'credits given back (refused)' }),
});
export type ModerationDecisionView = Static<typeof ModerationDecision>;

export const SenderIdAnswer = answer({ sender: SenderId });
export const SenderIdsAnswer = answer({ senders: Type.Array(SenderId) });
export const ContentRuleAnswer = answer({ rule: ContentRule });
export const ContentRulesAnswer = answer({ rules: Type.Array(ContentRule) });
export const DeletedRuleAnswer = answer({ deleted_id: Id });
export const HeldCampaignsAnswer = answer({ campaigns: Type.Array(HeldCampaign) });
export const ModerationDecisionAnswer = answer({ campaign: ModerationDecision });
export const OperatorAnswer = answer({ operator: Type.Boolean() });

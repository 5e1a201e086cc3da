// What GET /audit answers (audit.routes.ts), the audit service's view. Imports nothing but typebox and other
// schema files.
import Type, { type Static } from 'typebox';
import { answer, Id, Nullable, pageTotals, StringEnum, WallTime } from '../http/response-schemas.ts';

export const AuditEntry = Type.Object({
  id: Id,
  account_id: Type.String({ description: 'the account the change belongs to (a sub-account for its own)' }),
  date: WallTime,
  actor: Type.Object({
    kind: StringEnum(['user', 'token', 'smpp', 'cli', 'pigeon']),
    id: Nullable(Type.String({ description: "the token's or user's id" })),
    label: Nullable(Type.String({ description: "the token's name, the user's e-mail" })),
  }),
  action: Type.String({ examples: ['campaign.send'] }),
  object: Type.Object({ type: Nullable(Type.String()), id: Nullable(Type.String()) }),
  ip: Nullable(Type.String({ description: "the client's address; null outside a request" })),
});
export type AuditEntryView = Static<typeof AuditEntry>;

export const AuditAnswer = answer({
  entries: Type.Array(AuditEntry),
  totalRecords: pageTotals.totalRecords,
});

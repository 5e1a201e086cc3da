// What POST /erase answers (erase.routes.ts). Imports nothing but typebox and other schema files.
import Type, { type Static } from 'typebox';
import { answer, Id } from '../http/response-schemas.ts';

/** The kinds an erasure reports, in the order of its report (API.md's and the README's table). */
export const erasedKinds = [
  'messages',
  'replies',
  'mo_fragments',
  'links',
  'clicks',
  'contacts',
  'blacklist',
  'npai',
  'lookups',
  'events',
  'webhook_deliveries',
  'webhook_attempts',
  'alert_jobs',
  'balance_notifications',
  'accounts',
  'invoices',
  'smpp_outbox',
] as const;

const count = Type.Integer({ minimum: 0 });
/** An erasure's report as the API answers it: the erase service's `ErasureReport` for an account's caller. */
const erasureReport = {
  number: Type.String({ description: 'the number erased, normalized', examples: ['33612345678'] }),
  accounts: Type.Array(Id, { description: "the caller's account and its direct sub-accounts" }),
  removed: Type.Object(Object.fromEntries(erasedKinds.map((kind) => [kind, count])), {
    description: 'rows deleted or overwritten, per kind',
  }),
};
export const ErasureReport = Type.Object(erasureReport);
export type ErasureReportView = Static<typeof ErasureReport>;

export const EraseAnswer = answer(erasureReport);

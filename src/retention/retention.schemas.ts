// What the retention routes answer (retention.routes.ts). Imports nothing but typebox and other schema files.
import Type, { type Static } from 'typebox';
import { answer } from '../http/response-schemas.ts';

const Setting = Type.String({
  description: 'how long it is kept: "6m", "30d"; "-1" keeps it',
  examples: ['6m'],
});
/** How long each kind of data is kept. */
export const RetentionSettings = Type.Object({
  message: Setting,
  list: Setting,
  campaign: Setting,
  mo: Setting,
  lookup: Setting,
  survey: Type.String({
    description:
      "SMSFactor's survey setting, in the same form: stored and shown; Pigeon keeps no surveys to delete",
    examples: ['-1'],
  }),
});
export type RetentionSettingsView = Static<typeof RetentionSettings>;

export const DataRetentionAnswer = answer({ data_retention: RetentionSettings });
export const RetentionAnswer = answer({ retention: RetentionSettings });

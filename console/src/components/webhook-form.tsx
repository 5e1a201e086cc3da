// A webhook's fields as the create and edit forms show them (type, URL, signature), with the API's -7
// errors next to the field they name.

import type { EventType } from '../../../src/events/event-bodies.ts';
import type { WebhookView } from '../../../src/webhooks/webhooks.schemas.ts';
import { errorFor } from './account-parts.tsx';
import { Field, TextField } from './ui.tsx';

export type Webhook = WebhookView;

// Every event type of the vocabulary has its label here: a new one breaks the typecheck until it is named.
const typeLabels: Record<EventType, string> = {
  DLR: 'DLR: delivery receipts',
  MO: 'MO: replies',
  STOP: 'STOP: opt-out replies',
  CLICKER: 'CLICKER: link clicks',
  BALANCE_ALERT: 'BALANCE_ALERT: low balance',
  MODERATION: 'MODERATION: a campaign held, approved or refused',
};

/** The event types (src/events/event-bodies.ts), in the order the form lists them. */
export const webhookTypes = (Object.keys(typeLabels) as EventType[]).map((value) => ({
  value,
  label: typeLabels[value],
}));

export const typeLabel = (type: string) => webhookTypes.find((t) => t.value === type)?.label ?? type;

export interface WebhookDraft {
  type: string;
  url: string;
  signature: string;
}

// The URL first: a type error never quotes a URL, but a URL may hold the word "type".
const fields = ['url', 'type', 'signature'];

/** Whether an error is about one of the form's fields (shown there, not above the form). */
export const webhookFields = fields;

export function WebhookFields({
  draft,
  onDraft,
  error,
  missingUrl,
}: {
  draft: WebhookDraft;
  onDraft: (draft: WebhookDraft) => void;
  error: unknown;
  missingUrl?: string;
}) {
  return (
    <>
      <Field label="Event type" error={errorFor(error, fields, 'type')}>
        {(id, describedBy) => (
          <select
            id={id}
            value={draft.type}
            aria-describedby={describedBy}
            onChange={(e) => onDraft({ ...draft, type: (e.target as HTMLSelectElement).value })}
          >
            {webhookTypes.map((t) => (
              <option key={t.value} value={t.value}>
                {t.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <TextField
        label="URL"
        type="url"
        inputMode="url"
        placeholder="https://example.com/pigeon/events"
        value={draft.url}
        onValue={(url) => onDraft({ ...draft, url })}
        error={missingUrl ?? errorFor(error, fields, 'url')}
        hint="Pigeon POSTs each event there as JSON. Only public http and https addresses."
      />
      <TextField
        label="Signature (optional)"
        value={draft.signature}
        onValue={(signature) => onDraft({ ...draft, signature })}
        maxLength={255}
        error={errorFor(error, fields, 'signature')}
        hint="Sent as the X-SMSFactor-Signature header, as SMSFactor does, for receivers that check it."
      />
    </>
  );
}

// The body a webhook receives: the event's JSON (the default), or the same fields as an
// application/x-www-form-urlencoded form, for receivers written for SMSFactor that read `from` and `message`
// as form parameters (a PHP receiver's $_POST, Mautic's SMSFactor plugin).
import { ApiError } from '../shared/errors.ts';
import type { BodyFormat } from './webhooks.schemas.ts';

/** What a client may write for each format: its name or its media type. */
const spellings: Record<string, BodyFormat> = {
  json: 'json',
  'application/json': 'json',
  form: 'form',
  'application/x-www-form-urlencoded': 'form',
};

/** `webhook.format` as stored: `json` or `form`; anything else is a -7 naming the accepted values. */
export function checkFormat(format: string): BodyFormat {
  const known = spellings[format.trim().toLowerCase()];
  if (!known) {
    throw ApiError.data(
      `webhook.format "${format}" is not one of: json, form (or application/json, application/x-www-form-urlencoded)`,
    );
  }
  return known;
}

const contentTypes: Record<BodyFormat, string> = {
  json: 'application/json',
  form: 'application/x-www-form-urlencoded',
};

/**
 * The body to send and its content type. A form has one parameter per top-level field of the event: text as
 * it is, numbers and booleans written out, null empty, a nested value as its JSON.
 */
export function encodeBody(json: string, format: string): { body: string; contentType: string } {
  if (format !== 'form') return { body: json, contentType: contentTypes.json };
  let fields: unknown;
  try {
    fields = JSON.parse(json);
  } catch {
    fields = undefined;
  }
  const form = new URLSearchParams();
  if (fields === null || typeof fields !== 'object' || Array.isArray(fields)) form.set('data', json);
  else {
    for (const [key, value] of Object.entries(fields as Record<string, unknown>)) {
      form.append(
        key,
        value === null || value === undefined
          ? ''
          : typeof value === 'object'
            ? JSON.stringify(value)
            : String(value),
      );
    }
  }
  return { body: form.toString(), contentType: contentTypes.form };
}

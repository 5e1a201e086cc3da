// The error envelope's schema and the meaning of each `status`, for the OpenAPI document (openapi.ts). API
// errors are serialized by the error handler, never through a route's response schema (response-schemas.ts).
import Type from 'typebox';
import { Status } from '../shared/errors.ts';

/** What `status` means, the table of API.md. */
export const statusCodes: Record<number, string> = {
  [Status.ok]: 'OK',
  [Status.auth]:
    'authentication error (missing, unknown, expired, revoked or IP-restricted token; locked account)',
  [Status.xml]: 'XML error (body is not well-formed XML)',
  [Status.credits]: 'not enough credits',
  [Status.delay]: 'incorrect `delay` (bad format or impossible date)',
  [Status.notFound]: 'resource not found (also: a resource of another account)',
  [Status.json]: 'JSON error (body is not well-formed JSON)',
  [Status.data]: 'data error (validation: missing field, wrong type, marker/link count mismatch, bad URL…)',
  [Status.unknown]: 'unknown error (internal; details never leak internals)',
};

/** An API error: a negative `status`, a short `message`, and `details` saying exactly what was wrong. */
export const ErrorEnvelope = Type.Object(
  {
    status: Type.Integer({
      enum: Object.values(Status).filter((s) => s < 0),
      description: Object.entries(statusCodes)
        .filter(([status]) => Number(status) < 0)
        .map(([status, meaning]) => `${status}: ${meaning}`)
        .join('; '),
    }),
    message: Type.String({ examples: ['Data error'] }),
    details: Type.Optional(
      Type.String({
        description: 'what exactly was wrong: the field, its value and the rule',
        examples: ['sms.message.text is required'],
      }),
    ),
  },
  {
    title: 'Error',
    description:
      'An API error. It answers HTTP 200, as the reference service does; HTTP 413 (body too large), 429 (rate ' +
      'limited, with Retry-After) and 500 (internal failure) carry the same envelope.',
  },
);

// The pieces every route's response schema is made of: the envelope, ids, paging totals, and the error
// envelope. A route declares `response: answer({...its fields})`; Fastify then serializes its success with
// fast-json-stringify, which writes only the fields declared, in the types declared. So a schema has to
// say exactly what the service returns: a field left out would vanish from the JSON answer, a number
// declared as a string would go out quoted, a null declared as a string would go out as "".
//
// API errors do NOT go through these schemas: they answer HTTP 200 as well, and a success schema would
// drop their `details`. The error handler (app.ts) serializes the error envelope itself (`errorPayload`
// in envelope.ts), so a route's schema describes its success only. XML answers use their own serializer,
// which Fastify prefers to the schema: they are the whole object whatever the schema says.
import Type, { type Static, type TProperties, type TSchema, type TUnsafe } from 'typebox';
import { Status } from '../shared/errors.ts';

/** A database id: a string of digits (the Java SDK parses ids as integers). */
export const Id = Type.String({ pattern: '^[0-9]+$', description: 'an id: a string of digits' });

/** `T` or null. A JSON Schema type list, which fast-json-stringify writes without trying branches. */
export function Nullable<T extends TSchema & { type: string }>(schema: T): TUnsafe<Static<T> | null> {
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type, 'null'] });
}

/** A date as the SDKs parse it: `Y-m-d H:i:s`, in the configured time zone. */
export const WallTime = Type.String({
  description: 'a date `Y-m-d H:i:s` in the configured time zone (Europe/Paris by default)',
  examples: ['2026-11-23 14:05:00'],
});

/** `totalRecords` (all rows) and `totalDisplayRecords` (rows after the filters) of a paged read. */
export const pageTotals = {
  totalRecords: Type.Integer({ description: 'all rows' }),
  totalDisplayRecords: Type.Integer({ description: 'rows after the filters' }),
};

const envelope = {
  status: Type.Integer({ description: '1 on success', examples: [1] }),
  message: Type.String({ examples: ['OK'] }),
};

/** The success answer's schema: the envelope's `status` and `message`, then the route's own fields. */
export function Success<P extends TProperties>(fields: P) {
  return Type.Object({ ...envelope, ...fields });
}

/** A route's `response`: its success answer, HTTP 200. */
export function answer<P extends TProperties>(fields: P) {
  return { 200: Success(fields) };
}

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

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
//
// This file and the rooms' `*.schemas.ts` import nothing but typebox and each other: the console imports
// the view types they export (`Static<typeof …>`), and its program has no Node types.
import Type, {
  type Static,
  type TProperties,
  type TSchema,
  type TSchemaOptions,
  type TUnsafe,
} from 'typebox';

/** A database id: a string of digits (the Java SDK parses ids as integers). */
export const Id = Type.String({ pattern: '^[0-9]+$', description: 'an id: a string of digits' });

/** `T` or null. A JSON Schema type list, which fast-json-stringify writes without trying branches. */
export function Nullable<T extends TSchema & { type: string }>(schema: T): TUnsafe<Static<T> | null> {
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type, 'null'] });
}

/** A string of `values`, typed as their union; the JSON Schema is the same `{type: 'string', enum}`. */
export function StringEnum<const V extends readonly string[]>(values: V, options: TSchemaOptions = {}) {
  return Type.Unsafe<V[number]>(Type.String({ enum: [...values], ...options }));
}

/** 0 or 1, as SMSFactor writes flags. */
export const Flag = Type.Unsafe<0 | 1>(Type.Integer({ enum: [0, 1] }));

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

// The envelope every answer carries, and the choice between JSON and XML for it.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, Status } from '../shared/errors.ts';
import type { BodyFormat } from './body.ts';
import { toXml } from './xml.ts';

declare module 'fastify' {
  interface FastifyRequest {
    bodyFormat: BodyFormat | undefined;
  }
}

/** `Accept` decides; without a usable one, answer in the request body's format, else JSON. */
export function wantsXml(request: FastifyRequest): boolean {
  const accept = (request.headers.accept ?? '').toLowerCase();
  const xmlAt = accept.search(/\bxml\b/);
  const jsonAt = accept.indexOf('json');
  if (xmlAt >= 0 && (jsonAt < 0 || xmlAt < jsonAt)) return true;
  if (jsonAt >= 0) return false;
  return request.bodyFormat === 'xml';
}

const serializeXml = (payload: unknown) => toXml(payload as Record<string, unknown>);

/** Sets the reply's serializer and content type for the negotiated format; true for XML. */
export function negotiate(request: FastifyRequest, reply: FastifyReply): boolean {
  const xml = wantsXml(request);
  if (xml) reply.type('application/xml; charset=utf-8').serializer(serializeXml);
  else reply.type('application/json; charset=utf-8');
  return xml;
}

/**
 * Negotiates an error envelope's format and returns what to send. JSON is serialized here: an API error
 * answers HTTP 200 through the route that failed, and Fastify would otherwise write it with that route's
 * success schema, which knows nothing of `details`. XML goes as the object, to the XML serializer, which
 * Fastify prefers to any schema.
 */
export function errorPayload(
  request: FastifyRequest,
  reply: FastifyReply,
  body: Envelope,
): Envelope | string {
  return negotiate(request, reply) ? body : JSON.stringify(body);
}

export interface Envelope {
  status: number;
  message: string;
  details?: string;
}

export const ok = <T extends object>(fields: T) => ({ status: Status.ok, message: 'OK', ...fields });

interface ValidationIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

const article = (noun: string) => (/^[aeiou]/i.test(noun) ? 'an' : 'a');

/** Turns a schema violation into one precise sentence: `sms.message.text is required`. */
export function describeValidation(issues: ValidationIssue[], context: string | undefined): string {
  const issue = issues[0];
  const base = issue.instancePath.split('/').filter(Boolean);
  if (context && context !== 'body') base.unshift(context);
  const field = (extra?: unknown) => [...base, ...(extra === undefined ? [] : [String(extra)])].join('.');
  switch (issue.keyword) {
    case 'required':
      return `${field(issue.params.missingProperty)} is required`;
    case 'enum':
      return `${field()} must be one of: ${(issue.params.allowedValues as unknown[]).join(', ')}`;
    case 'type':
      if (base.length === 0) return 'request body is missing or is not an object';
      return `${field()} must be ${article(String(issue.params.type))} ${issue.params.type}`;
    case 'additionalProperties':
      return `${field(issue.params.additionalProperty)} is not a known field`;
    default:
      return `${field() || 'request'} ${issue.message ?? 'is invalid'}`;
  }
}

interface Logger {
  error(obj: unknown, msg: string): void;
}

/** Maps any error to the envelope: API errors answer 200 (as the reference service), transport errors keep their code. */
export function errorReply(error: FastifyError | Error, request: FastifyRequest, log: Logger) {
  if (error instanceof ApiError) {
    return {
      httpCode: error.httpCode,
      headers: error.headers,
      body: { status: error.status, message: error.message, details: error.details },
    };
  }
  const fe = error as FastifyError & { validation?: ValidationIssue[]; validationContext?: string };
  if (fe.validation) {
    const details = describeValidation(fe.validation, fe.validationContext);
    return { httpCode: 200, body: { status: Status.data, message: 'Data error', details } };
  }
  if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return {
      httpCode: 413,
      body: {
        status: Status.data,
        message: 'Request too large',
        details: 'request body exceeds the size limit',
      },
    };
  }
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    return {
      httpCode: fe.statusCode,
      body: { status: Status.data, message: 'Bad request', details: fe.message },
    };
  }
  // PostgreSQL refuses a NUL character (U+0000) in a text (SQLSTATE 22021) wherever it came from (a form, a query
  // string, XML): the statement and its transaction failed, so nothing of the request was stored.
  if ((error as { code?: unknown }).code === '22021') {
    return {
      httpCode: 200,
      body: {
        status: Status.data,
        message: 'Data error',
        details: 'a text of this request holds a NUL character (U+0000), which cannot be stored',
      },
    };
  }
  log.error({ err: error, url: request.url, method: request.method }, 'unhandled error');
  return {
    httpCode: 500,
    body: { status: Status.unknown, message: 'Unknown error', details: 'internal error; it has been logged' },
  };
}

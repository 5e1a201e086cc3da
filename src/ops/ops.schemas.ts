// How /health, /ready and /metrics are described in /openapi.json. Their answers are written by ops.ts as text
// (the same bytes on METRICS_PORT's own server), so these schemas document them and serialize nothing.
import type { FastifySchema } from 'fastify';
import Type from 'typebox';

const Checks = Type.Record(Type.String(), Type.String(), {
  description: 'each check (database, migrations, each role…) and "ok" or what is wrong with it',
});

const Refused = (what: string) =>
  Type.Object(
    { status: Type.Integer(), message: Type.String(), details: Type.String(), checks: Type.Optional(Checks) },
    { description: what },
  );

const common = { tags: ['operations'], security: [] };

export const healthSchema: FastifySchema = {
  ...common,
  summary: 'Is the process up',
  description: 'Outside authentication. Served here unless METRICS_PORT serves it on a port of its own.',
  response: {
    200: Type.Object(
      { status: Type.Literal(1), message: Type.Literal('OK') },
      { description: 'the process answers' },
    ),
  },
};

export const readySchema: FastifySchema = {
  ...common,
  summary: 'Can the process work: its database, its migrations, and (under the supervisor) every role',
  description: 'Outside authentication. Served here unless METRICS_PORT serves it on a port of its own.',
  response: {
    200: Type.Object(
      { status: Type.Literal(1), message: Type.Literal('OK'), checks: Checks },
      { description: 'every check is ok' },
    ),
    503: Refused('some check failed (`status` -99); `details` names each failing one'),
  },
};

export const metricsSchema: FastifySchema = {
  ...common,
  summary: 'Prometheus metrics of every process',
  description:
    'Prometheus text exposition format. With METRICS_TOKEN set it needs `Authorization: Bearer <METRICS_TOKEN>`; ' +
    'with METRICS=false it is not served. Served here unless METRICS_PORT serves it on a port of its own.',
  response: {
    200: {
      description: 'the metrics',
      content: { 'text/plain; version=0.0.4': { schema: Type.String() } },
    },
    401: Refused('METRICS_TOKEN is set and the header does not carry it (`status` -1)'),
  },
};

import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { type App, caller } from '../http/types.ts';
import { PageQuery } from '../shared/paging.ts';
import { AuditAnswer } from './audit.schemas.ts';
import type { AuditService } from './audit.service.ts';

// Every filter is read as text and checked by the service, which names it in its -7.
const text = Type.Optional(Type.String());
const AuditQuery = Type.Object({
  ...PageQuery.properties,
  action: text,
  actor: text,
  date_start: text,
  date_end: text,
  sub_account_id: text,
});

export function auditRoutes(app: App, audit: AuditService): void {
  app.get('/audit', { schema: { querystring: AuditQuery, response: AuditAnswer } }, async (req) =>
    ok(await audit.list(caller(req), req.query)),
  );
}

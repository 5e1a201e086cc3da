import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { type App, caller } from '../http/types.ts';
import { PageQuery } from '../shared/paging.ts';
import { InvoiceAnswer, InvoicesAnswer } from './invoices.schemas.ts';
import type { InvoicesService } from './invoices.service.ts';

const IdParams = Type.Object({ id: Type.String() });

/** The file: never serialized from a schema (a Buffer goes out as it is); an error is the envelope. */
const InvoiceFile = {
  200: {
    description: 'the invoice as a PDF',
    content: { 'application/pdf': { schema: Type.Unsafe<Buffer>({ type: 'string', format: 'binary' }) } },
  },
};

export function invoicesRoutes(app: App, invoices: InvoicesService): void {
  app.get(
    '/account/invoice',
    {
      schema: {
        querystring: PageQuery,
        response: InvoicesAnswer,
      },
    },
    async (req) => ok(await invoices.list(caller(req), req.query)),
  );
  app.get('/account/invoice/:id', { schema: { params: IdParams, response: InvoiceAnswer } }, async (req) =>
    ok(await invoices.get(caller(req), req.params.id)),
  );
  // The file itself whatever the Accept header (the Java SDK sends application/json); an error is the
  // envelope, negotiated as for any other route.
  app.get(
    '/account/invoice/:id/download',
    { schema: { params: IdParams, response: InvoiceFile } },
    async (req, reply) => {
      const { filename, pdf } = await invoices.download(caller(req), req.params.id);
      return reply
        .type('application/pdf')
        .header('content-disposition', `attachment; filename="${filename}"`)
        .send(pdf);
    },
  );
}

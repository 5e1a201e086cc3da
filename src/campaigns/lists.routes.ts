import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { answer, Id, Nullable, pageTotals, WallTime } from '../http/response-schemas.ts';
import { type App, caller } from '../http/types.ts';
import { PageQuery } from '../shared/paging.ts';
import type { ContactInput, ListsService } from './lists.service.ts';

const Info = Type.Optional(Type.String());
const Contact = Type.Object({ value: Type.String(), info1: Info, info2: Info, info3: Info, info4: Info });
const Contacts = Type.Object({ gsm: Type.Optional(Type.Array(Contact)) });
const ListBody = Type.Object({
  list: Type.Object({
    name: Type.Optional(Type.String()),
    listId: Type.Optional(Type.String()),
    list_id: Type.Optional(Type.String()),
    contacts: Type.Optional(Contacts),
  }),
});
const ContactFields = Type.Object({
  destination: Type.Optional(Type.String()),
  info1: Info,
  info2: Info,
  info3: Info,
  info4: Info,
});
/** `{contact:{…}}`, or the same fields flat at the top of the body. */
const ContactBody = Type.Object({
  contact: Type.Optional(ContactFields),
  destination: Type.Optional(Type.String()),
  info1: Info,
  info2: Info,
  info3: Info,
  info4: Info,
});
const IdParams = Type.Object({ id: Type.String() });
const ListQuery = Type.Object({
  start: Type.Optional(Type.String()),
  length: Type.Optional(Type.String()),
  search: Type.Optional(Type.String()),
});
const numbersBodies = {
  blacklist: Type.Object({ blacklist: Type.Object({ contacts: Contacts }) }),
  npai: Type.Object({ npai: Type.Object({ contacts: Contacts }) }),
};

const info = { info1: Type.String(), info2: Type.String(), info3: Type.String(), info4: Type.String() };
const ListContact = Type.Object({ id: Id, destination: Type.String(), ...info });
const NumberEntry = Type.Object({
  id: Id,
  destination: Type.String(),
  ...info,
  date: WallTime,
  campaign_id: Nullable(Type.String({ description: 'the campaign a STOP answered' })),
});
/** The envelope alone. */
const Done = answer({});
const Removed = answer({ removed: Type.Integer() });

export function listsRoutes(app: App, lists: ListsService): void {
  app.post(
    '/list',
    {
      schema: {
        body: ListBody,
        response: answer({
          id: Id,
          contacts: Type.Integer({ description: 'contacts added' }),
          invalid: Type.Integer(),
          duplicates: Type.Integer(),
        }),
      },
    },
    async (req) => ok(await lists.saveList(caller(req), req.body.list)),
  );
  app.get(
    '/lists',
    {
      schema: {
        response: answer({
          lists: Type.Array(
            Type.Object({ id: Id, name: Type.String(), date: WallTime, count: Type.Integer() }),
          ),
        }),
      },
    },
    async (req) => ok({ lists: await lists.lists(caller(req)) }),
  );
  app.get(
    '/list/:id',
    {
      schema: {
        params: IdParams,
        querystring: ListQuery,
        response: answer({
          list: Type.Array(ListContact),
          name: Type.String(),
          contacts: Type.Integer({ description: 'contacts in the list' }),
          ...pageTotals,
        }),
      },
    },
    async (req) => ok(await lists.list(caller(req), req.params.id, req.query)),
  );
  app.delete('/list/:id', { schema: { params: IdParams, response: Done } }, async (req) =>
    ok(await lists.deleteList(caller(req), req.params.id)),
  );
  app.put('/list/deduplicate/:id', { schema: { params: IdParams, response: Removed } }, async (req) =>
    ok(await lists.deduplicate(caller(req), req.params.id)),
  );
  app.put('/list/:id/npai/clear', { schema: { params: IdParams, response: Removed } }, async (req) =>
    ok(await lists.clearNpai(caller(req), req.params.id)),
  );
  app.delete('/list/contact/:id', { schema: { params: IdParams, response: Done } }, async (req) =>
    ok(await lists.deleteContact(caller(req), req.params.id)),
  );
  app.put(
    '/list/contact/:id',
    {
      schema: { params: IdParams, body: ContactBody, response: Done },
      // A PUT without a body changes nothing, as one with an empty object: the id still has to be the caller's.
      preValidation: async (req) => {
        if (req.body === undefined) req.body = {};
      },
    },
    async (req) => {
      const { contact, ...flat } = req.body;
      return ok(await lists.updateContact(caller(req), req.params.id, contact ?? flat));
    },
  );

  app.put(
    '/campaign/:ticket/npai',
    {
      schema: {
        params: Type.Object({ ticket: Type.String() }),
        response: answer({
          NPAI: Type.Integer({ description: 'NPAI numbers of the campaign' }),
          added_contacts: Type.Integer({ description: 'of them, newly blacklisted' }),
        }),
      },
    },
    async (req) => ok(await lists.blacklistCampaignNpai(caller(req), req.params.ticket)),
  );

  for (const list of ['blacklist', 'npai'] as const) {
    app.post(
      `/${list}`,
      {
        schema: {
          body: numbersBodies[list],
          response: answer({ added_contacts: Type.Integer(), invalid: Type.Integer() }),
        },
      },
      async (req) => {
        const body = req.body as Record<typeof list, { contacts: { gsm?: ContactInput[] } }>;
        return ok(await lists.addNumbers(caller(req), list, body[list].contacts.gsm ?? []));
      },
    );
    app.get(
      `/${list}`,
      {
        schema: {
          querystring: PageQuery,
          response: answer({ list: Type.Array(NumberEntry), ...pageTotals }),
        },
      },
      async (req) => ok(await lists.numbers(caller(req), list, req.query.start, req.query.length)),
    );
    app.delete(`/${list}/contact/:id`, { schema: { params: IdParams, response: Done } }, async (req) =>
      ok(await lists.removeNumber(caller(req), list, req.params.id)),
    );
  }
}

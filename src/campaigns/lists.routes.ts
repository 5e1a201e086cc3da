import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { type App, caller } from '../http/types.ts';
import { PageQuery } from '../shared/paging.ts';
import {
  AddedNumbersAnswer,
  CampaignNpaiAnswer,
  DoneAnswer,
  ListPageAnswer,
  ListsAnswer,
  NumbersAnswer,
  RemovedAnswer,
  SavedListAnswer,
} from './lists.schemas.ts';
import type { ContactInput, ListsService } from './lists.service.ts';

const Info = Type.Optional(Type.String());
const Contact = Type.Object({ value: Type.String(), info1: Info, info2: Info, info3: Info, info4: Info });
const Contacts = Type.Object({ gsm: Type.Optional(Type.Array(Contact)) });
const ListBody = Type.Object({
  list: Type.Object({
    name: Type.Optional(Type.String()),
    listId: Type.Optional(Type.String()),
    list_id: Type.Optional(Type.String()),
    list: Type.Optional(Type.String()),
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

/**
 * SMSFactor's own XML example for POST /npai has the root `<list>` (`<list><contacts><gsm>…`), and its Elixir
 * client sends `{list:{contacts:…}}` to both /npai and /blacklist: a body whose only resource is `list` is read
 * as the route's own root.
 */
function underOwnRoot(body: unknown, root: 'blacklist' | 'npai'): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const given = body as Record<string, unknown>;
  if (root in given || !('list' in given)) return body;
  const { list, ...rest } = given;
  return { ...rest, [root]: list };
}

export function listsRoutes(app: App, lists: ListsService): void {
  app.post(
    '/list',
    {
      schema: {
        body: ListBody,
        response: SavedListAnswer,
      },
    },
    async (req) => ok(await lists.saveList(caller(req), req.body.list)),
  );
  app.get(
    '/lists',
    {
      schema: {
        response: ListsAnswer,
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
        response: ListPageAnswer,
      },
    },
    async (req) => ok(await lists.list(caller(req), req.params.id, req.query)),
  );
  app.delete('/list/:id', { schema: { params: IdParams, response: DoneAnswer } }, async (req) =>
    ok(await lists.deleteList(caller(req), req.params.id)),
  );
  app.put('/list/deduplicate/:id', { schema: { params: IdParams, response: RemovedAnswer } }, async (req) =>
    ok(await lists.deduplicate(caller(req), req.params.id)),
  );
  app.put('/list/:id/npai/clear', { schema: { params: IdParams, response: RemovedAnswer } }, async (req) =>
    ok(await lists.clearNpai(caller(req), req.params.id)),
  );
  app.delete('/list/contact/:id', { schema: { params: IdParams, response: DoneAnswer } }, async (req) =>
    ok(await lists.deleteContact(caller(req), req.params.id)),
  );
  app.put(
    '/list/contact/:id',
    {
      schema: { params: IdParams, body: ContactBody, response: DoneAnswer },
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
        response: CampaignNpaiAnswer,
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
          response: AddedNumbersAnswer,
        },
        preValidation: async (req) => {
          req.body = underOwnRoot(req.body, list) as typeof req.body;
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
          response: NumbersAnswer,
        },
      },
      async (req) => ok(await lists.numbers(caller(req), list, req.query.start, req.query.length)),
    );
    app.delete(`/${list}/contact/:id`, { schema: { params: IdParams, response: DoneAnswer } }, async (req) =>
      ok(await lists.removeNumber(caller(req), list, req.params.id)),
    );
  }
}

import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { type App, caller } from '../http/types.ts';
import { PageQuery } from '../shared/paging.ts';
import type { ListsService } from './lists.service.ts';

const Info = Type.Optional(Type.String());
const ListBody = Type.Object({
  list: Type.Object({
    name: Type.Optional(Type.String()),
    listId: Type.Optional(Type.String()),
    contacts: Type.Optional(
      Type.Object({
        gsm: Type.Optional(
          Type.Array(
            Type.Object({ value: Type.String(), info1: Info, info2: Info, info3: Info, info4: Info }),
          ),
        ),
      }),
    ),
  }),
});
const IdParams = Type.Object({ id: Type.String() });
const Numbers = Type.Object({
  contacts: Type.Object({ gsm: Type.Array(Type.Object({ value: Type.String() })) }),
});
const numbersBodies = {
  blacklist: Type.Object({ blacklist: Numbers }),
  npai: Type.Object({ npai: Numbers }),
};

export function listsRoutes(app: App, lists: ListsService): void {
  app.post('/list', { schema: { body: ListBody } }, async (req) =>
    ok(await lists.saveList(caller(req), req.body.list)),
  );
  app.get('/lists', async (req) => ok({ lists: await lists.lists(caller(req)) }));
  app.get('/list/:id', { schema: { params: IdParams, querystring: PageQuery } }, async (req) =>
    ok(await lists.list(caller(req), req.params.id, req.query.start, req.query.length)),
  );

  for (const list of ['blacklist', 'npai'] as const) {
    app.post(`/${list}`, { schema: { body: numbersBodies[list] } }, async (req) => {
      const body = req.body as Record<typeof list, { contacts: { gsm: { value: string }[] } }>;
      return ok(await lists.addNumbers(caller(req), list, body[list].contacts.gsm));
    });
    app.get(`/${list}`, { schema: { querystring: PageQuery } }, async (req) =>
      ok({ [list]: await lists.numbers(caller(req), list, req.query.start, req.query.length) }),
    );
  }
}

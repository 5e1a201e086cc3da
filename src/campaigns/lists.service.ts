// Contact lists, and the blacklist and NPAI lists that filter every send of the account.
import type { AuthContext } from '../shared/auth-context.ts';
import type { Clock } from '../shared/clock.ts';
import { ApiError } from '../shared/errors.ts';
import { idIn, idOut } from '../shared/ids.ts';
import { parsePage } from '../shared/paging.ts';
import { checkNumber, normalizeNumber } from '../sms/numbers.ts';
import type { Db, Executor } from '../store/db.ts';
import { listsRepo, type NumberList, numberListsRepo } from './lists.repo.ts';

export interface ContactInput {
  value: string;
  info1?: string;
  info2?: string;
  info3?: string;
  info4?: string;
}

export interface ListInput {
  name?: string;
  listId?: string;
  contacts?: { gsm?: ContactInput[] };
}

const maxNameLength = 100;
const maxInfoLength = 255;
const lookupChunk = 500;

const iso = (ms: number) => new Date(Number(ms)).toISOString();

export type ListsService = ReturnType<typeof createListsService>;

export function createListsService(deps: { db: Db; clock: Clock; maxContacts: number }) {
  const { db, clock, maxContacts } = deps;

  async function ownList(auth: AuthContext, rawId: string) {
    const id = idIn(rawId);
    const list = id === undefined ? undefined : await listsRepo.find(db, auth.accountId, id);
    if (!list) throw ApiError.notFound(`list "${rawId}" not found`);
    return list;
  }

  return {
    /** Creates a list with its contacts, or adds contacts to the list `listId`. */
    async saveList(auth: AuthContext, input: ListInput) {
      const accountId = auth.accountId;
      const given = input.contacts?.gsm ?? [];
      if (given.length > maxContacts) {
        throw ApiError.data(
          `list.contacts.gsm has ${given.length} contacts; at most ${maxContacts} per request`,
        );
      }
      const rawListId = input.listId === undefined ? '' : String(input.listId).trim();
      const existing = rawListId === '' ? undefined : await ownList(auth, rawListId);
      const name = (input.name ?? '').trim();
      if (!existing) {
        if (name === '') throw ApiError.data('list.name is required to create a list');
        if (name.length > maxNameLength)
          throw ApiError.data(`list.name is longer than ${maxNameLength} characters`);
      }

      let invalid = 0;
      let duplicates = 0;
      const seen = new Set<string>();
      const fresh: { number: string; contact: ContactInput }[] = [];
      for (const contact of given) {
        const number = normalizeNumber(String(contact.value ?? ''));
        if (number === undefined || (!seen.has(number) && !checkNumber(number).valid)) {
          invalid++;
          continue;
        }
        if (seen.has(number)) {
          duplicates++;
          continue;
        }
        seen.add(number);
        for (const key of ['info1', 'info2', 'info3', 'info4'] as const) {
          const value = contact[key];
          if (value !== undefined && String(value).length > maxInfoLength) {
            throw ApiError.data(
              `list.contacts.gsm: ${key} of ${number} is longer than ${maxInfoLength} characters`,
            );
          }
        }
        fresh.push({ number, contact });
      }

      const now = clock.now();
      return db.transaction().execute(async (tx) => {
        let listId: number;
        let toAdd = fresh;
        if (existing) {
          listId = Number(existing.id);
          // Numbers the list already holds are duplicates too; looked up a chunk at a time.
          const held = new Set<string>();
          for (let i = 0; i < fresh.length; i += lookupChunk) {
            const numbers = fresh.slice(i, i + lookupChunk).map((f) => f.number);
            for (const n of await listsRepo.numbersIn(tx, accountId, listId, numbers)) held.add(n);
          }
          if (held.size > 0) {
            toAdd = fresh.filter((f) => !held.has(f.number));
            duplicates += fresh.length - toAdd.length;
          }
        } else {
          listId = await listsRepo.insert(tx, accountId, name, now);
        }
        const info = (v: string | undefined) => (v === undefined || v === null ? null : String(v));
        await listsRepo.insertContacts(
          tx,
          toAdd.map(({ number, contact }) => [
            listId,
            accountId,
            number,
            info(contact.info1),
            info(contact.info2),
            info(contact.info3),
            info(contact.info4),
            now,
          ]),
        );
        return { id: idOut(listId), contacts: toAdd.length, invalid, duplicates };
      });
    },

    async lists(auth: AuthContext) {
      const rows = await listsRepo.all(db, auth.accountId);
      return rows.map((r) => ({
        list_id: idOut(r.id),
        name: r.name,
        created_at: iso(r.created_at),
        count: Number(r.count),
      }));
    },

    async list(auth: AuthContext, rawId: string, start?: string, length?: string) {
      const list = await ownList(auth, rawId);
      const page = parsePage({ start, length });
      const id = Number(list.id);
      const [total, rows] = await Promise.all([
        listsRepo.countContacts(db, auth.accountId, [id]),
        listsRepo.contactsPage(db, auth.accountId, id, page.start, page.length),
      ]);
      return {
        list_id: idOut(id),
        name: list.name,
        total,
        contacts: rows.map((c) => ({
          contact_id: idOut(c.id),
          value: c.number,
          info1: c.info1 ?? '',
          info2: c.info2 ?? '',
          info3: c.info3 ?? '',
          info4: c.info4 ?? '',
        })),
      };
    },

    /** Adds numbers to the blacklist or NPAI list; numbers already there are not added twice. */
    async addNumbers(auth: AuthContext, list: NumberList, gsm: { value: string }[]) {
      if (gsm.length > maxContacts) {
        throw ApiError.data(
          `${list}.contacts.gsm has ${gsm.length} numbers; at most ${maxContacts} per request`,
        );
      }
      let invalid = 0;
      const numbers = new Set<string>();
      for (const g of gsm) {
        const number = normalizeNumber(String(g.value ?? ''));
        if (number === undefined) invalid++;
        else numbers.add(number);
      }
      const added = await db
        .transaction()
        .execute((tx) => numberListsRepo.add(tx, list, auth.accountId, [...numbers], clock.now()));
      return { added_contacts: added, invalid };
    },

    /** Puts one number on the blacklist or the NPAI list inside the caller's transaction (delivery outcomes). */
    async addNumberInTx(tx: Executor, accountId: number, list: NumberList, number: string): Promise<void> {
      await numberListsRepo.add(tx, list, accountId, [number], clock.now());
    },

    async numbers(auth: AuthContext, list: NumberList, start?: string, length?: string) {
      const page = parsePage({ start, length });
      const rows = await numberListsRepo.page(db, list, auth.accountId, page.start, page.length);
      return rows.map((r) => ({ id: idOut(r.id), number: r.number, added_at: iso(r.created_at) }));
    },
  };
}

// Contact lists, and the blacklist and NPAI lists that filter every send of the account.
import { type AuditEntry, type AuditTrail, withEntry } from '../shared/audit-trail.ts';
import type { AuthContext } from '../shared/auth-context.ts';
import type { Clock } from '../shared/clock.ts';
import type { Erasure } from '../shared/erasure.ts';
import { ApiError } from '../shared/errors.ts';
import { idIn, idOut } from '../shared/ids.ts';
import { parsePage } from '../shared/paging.ts';
import { zonedTime } from '../shared/zoned-time.ts';
import { checkNumber, normalizeNumber } from '../sms/numbers.ts';
import type { Db, Executor } from '../store/db.ts';
import { campaignsRepo } from './campaigns.repo.ts';
import {
  type ContactChanges,
  type InfoKey,
  listsRepo,
  type NumberEntry,
  type NumberList,
  numberListsRepo,
} from './lists.repo.ts';
import type { ListPageView, ListSummaryView, NumbersPageView, SavedListView } from './lists.schemas.ts';
import { listsLifecycleRepo } from './lists-lifecycle.repo.ts';
import { infoOut } from './message-text.ts';

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
  /** Accepted beside `listId`, as some clients spell it. */
  list_id?: string;
  /** Accepted beside `listId`: the key SMSFactor's Java SDK sends the list's id under. */
  list?: string;
  contacts?: { gsm?: ContactInput[] };
}

/** PUT /list/contact/:id: the fields to change; those left out stay as they are. */
export interface ContactUpdate {
  destination?: string;
  info1?: string;
  info2?: string;
  info3?: string;
  info4?: string;
}

const maxNameLength = 100;
const maxInfoLength = 255;
const maxSearchLength = 100;
const lookupChunk = 500;
const infoKeys: readonly InfoKey[] = ['info1', 'info2', 'info3', 'info4'];

const text = (v: unknown): string | null => (v === undefined || v === null ? null : String(v));

/** Throws -7 when an info field given is longer than the bound; `where` names the field's place. */
function checkInfo(fields: Partial<Record<InfoKey, unknown>>, where: (key: InfoKey) => string): void {
  for (const key of infoKeys) {
    const value = text(fields[key]);
    if (value !== null && value.length > maxInfoLength) {
      throw ApiError.data(`${where(key)} is longer than ${maxInfoLength} characters`);
    }
  }
}

/** A number as lists keep it, or undefined when it is not a valid number (the send's first filter). */
function listNumber(raw: unknown): string | undefined {
  const number = normalizeNumber(String(raw ?? ''));
  return number !== undefined && checkNumber(number).valid ? number : undefined;
}

/** A campaign's NPAI numbers, read by delivery (wired in `src/deps.ts`) for PUT /campaign/:ticket/npai. */
export interface CampaignNpai {
  /** The numbers of the campaign's messages with DLR 5, in send order, a page at a time, in `tx`. */
  numbers(tx: Executor, accountId: number, campaignId: number): AsyncIterable<string[]>;
}

export type ListsService = ReturnType<typeof createListsService>;

export function createListsService(deps: {
  db: Db;
  clock: Clock;
  maxContacts: number;
  timezone: string;
  campaignNpai: CampaignNpai;
  /** The audit log: every change of a list, a contact, the blacklist or the NPAI list, in its transaction. */
  audit: AuditTrail;
}) {
  const { db, clock, maxContacts, campaignNpai, audit } = deps;
  const { wallTime } = zonedTime(deps.timezone);

  /** Runs `work` in a transaction that also writes its audit entry (the caller's, on `objectType` `objectId`). */
  function audited<T>(
    auth: AuthContext,
    action: string,
    object: Pick<AuditEntry, 'objectType' | 'objectId'>,
    work: (tx: Executor) => Promise<T>,
  ): Promise<T> {
    return withEntry(db, audit, { accountId: auth.accountId, auth, action, ...object }, work);
  }

  async function ownList(auth: AuthContext, rawId: unknown) {
    const id = idIn(rawId);
    const list = id === undefined ? undefined : await listsRepo.find(db, auth.accountId, id);
    if (!list) throw ApiError.notFound(`list "${String(rawId)}" not found`);
    return { id: Number(list.id), name: list.name };
  }

  const contactNotFound = (rawId: string) => ApiError.notFound(`contact "${rawId}" not found`);
  const entryNotFound = (list: NumberList, rawId: string) =>
    ApiError.notFound(`${list} entry "${rawId}" not found`);

  return {
    /** Creates a list with its contacts, or adds contacts to the list `listId` (or `list_id`, or `list`). */
    async saveList(auth: AuthContext, input: ListInput): Promise<SavedListView> {
      const accountId = auth.accountId;
      const given = input.contacts?.gsm ?? [];
      if (given.length > maxContacts) {
        throw ApiError.data(
          `list.contacts.gsm has ${given.length} contacts; at most ${maxContacts} per request`,
        );
      }
      const listIdOf = (v: unknown) => (v === undefined || v === null ? '' : String(v).trim());
      // `listId` as SMSFactor documents it, `list_id` as its PHP SDK's README writes it, `list` as its Java
      // SDK sends it: each names the list to add to, and two that disagree are refused.
      const named = (['listId', 'list_id', 'list'] as const)
        .map((field) => ({ field, id: listIdOf(input[field]) }))
        .filter((n) => n.id !== '');
      const other = named.find((n) => n.id !== named[0].id);
      if (other) {
        throw ApiError.data(
          `list.${named[0].field} "${named[0].id}" and list.${other.field} "${other.id}" name different lists`,
        );
      }
      const rawListId = named[0]?.id ?? '';
      const existing = rawListId === '' ? undefined : await ownList(auth, rawListId);
      const name = (input.name ?? '').trim();
      if (!existing && name.length > maxNameLength) {
        throw ApiError.data(`list.name "${name.slice(0, 20)}…" is longer than ${maxNameLength} characters`);
      }

      let invalid = 0;
      let duplicates = 0;
      const seen = new Set<string>();
      const fresh: { number: string; contact: ContactInput }[] = [];
      for (const contact of given) {
        const normalized = normalizeNumber(String(contact.value ?? ''));
        if (normalized !== undefined && seen.has(normalized)) {
          duplicates++;
          continue;
        }
        const number = listNumber(contact.value);
        if (number === undefined) {
          invalid++;
          continue;
        }
        seen.add(number);
        checkInfo(contact, (key) => `list.contacts.gsm: ${key} of ${number}`);
        fresh.push({ number, contact });
      }

      const now = clock.now();
      return db.transaction().execute(async (tx) => {
        let listId: number;
        let toAdd = fresh;
        if (existing) {
          listId = existing.id;
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
          // SMSFactor names a list created without a name after its creation date.
          listId = await listsRepo.insert(tx, accountId, name === '' ? wallTime(now) : name, now);
        }
        await audit.record(tx, {
          accountId,
          auth,
          action: existing ? 'list.add_contacts' : 'list.create',
          objectType: 'list',
          objectId: listId,
        });
        await listsRepo.insertContacts(
          tx,
          toAdd.map(({ number, contact }) => [
            listId,
            accountId,
            number,
            text(contact.info1),
            text(contact.info2),
            text(contact.info3),
            text(contact.info4),
            now,
          ]),
        );
        return { id: idOut(listId), contacts: toAdd.length, invalid, duplicates };
      });
    },

    async lists(auth: AuthContext): Promise<ListSummaryView[]> {
      const rows = await listsRepo.all(db, auth.accountId);
      return rows.map((r) => ({
        id: idOut(r.id),
        name: r.name,
        date: wallTime(Number(r.created_at)),
        count: Number(r.count),
      }));
    },

    /** One page of a list's contacts, filtered by `search` (a substring of the number or of info1…info4). */
    async list(
      auth: AuthContext,
      rawId: string,
      query: { start?: string; length?: string; search?: string },
    ): Promise<ListPageView> {
      const list = await ownList(auth, rawId);
      const page = parsePage(query);
      const search = query.search === undefined || query.search === '' ? undefined : query.search;
      if (search !== undefined && search.length > maxSearchLength) {
        throw ApiError.data(`search "${search.slice(0, 20)}…" is longer than ${maxSearchLength} characters`);
      }
      const [total, shown, rows] = await Promise.all([
        listsRepo.countContacts(db, auth.accountId, [list.id]),
        search === undefined ? undefined : listsRepo.countMatching(db, auth.accountId, list.id, search),
        listsRepo.contactsPage(db, auth.accountId, list.id, page.start, page.length, search),
      ]);
      return {
        list: rows.map((c) => ({
          id: idOut(c.id),
          destination: c.number,
          ...infoOut(c),
        })),
        name: list.name,
        contacts: total,
        totalRecords: total,
        totalDisplayRecords: shown ?? total,
      };
    },

    /** Deletes a list and its contacts; messages already sent to them stay (they keep their own copy). */
    async deleteList(auth: AuthContext, rawId: string) {
      const id = idIn(rawId);
      const notFound = () => ApiError.notFound(`list "${rawId}" not found`);
      if (id === undefined) throw notFound();
      await audited(auth, 'list.delete', { objectType: 'list', objectId: id }, async (tx) => {
        if (!(await listsRepo.remove(tx, auth.accountId, id))) throw notFound();
      });
      return {};
    },

    /** Deletes the contacts whose number appears earlier in the same list (the lowest id of each stays). */
    async deduplicate(auth: AuthContext, rawId: string) {
      const list = await ownList(auth, rawId);
      const removed = await audited(
        auth,
        'list.deduplicate',
        { objectType: 'list', objectId: list.id },
        (tx) => listsRepo.deduplicate(tx, auth.accountId, list.id),
      );
      return { removed };
    },

    /** Deletes the list's contacts whose number is on the account's NPAI list. */
    async clearNpai(auth: AuthContext, rawId: string) {
      const list = await ownList(auth, rawId);
      const removed = await audited(
        auth,
        'list.clear_npai',
        { objectType: 'list', objectId: list.id },
        (tx) => listsRepo.removeNpai(tx, auth.accountId, list.id),
      );
      return { removed };
    },

    async deleteContact(auth: AuthContext, rawId: string) {
      const id = idIn(rawId);
      if (id === undefined) throw contactNotFound(rawId);
      await audited(auth, 'contact.delete', { objectType: 'contact', objectId: id }, async (tx) => {
        if ((await listsRepo.removeContact(tx, auth.accountId, id)) === 0) throw contactNotFound(rawId);
      });
      return {};
    },

    /** Changes the fields given of one contact; a new destination must be a valid number. */
    async updateContact(auth: AuthContext, rawId: string, input: ContactUpdate) {
      const id = idIn(rawId);
      const contact = id === undefined ? undefined : await listsRepo.findContact(db, auth.accountId, id);
      if (id === undefined || !contact) throw contactNotFound(rawId);
      const changes: ContactChanges = {};
      if (input.destination !== undefined && input.destination !== null) {
        const number = listNumber(input.destination);
        if (number === undefined) {
          throw ApiError.data(
            `contact.destination "${String(input.destination)}" is not a valid number ` +
              '(digits with the country code first, e.g. 33612345678)',
          );
        }
        changes.number = number;
      }
      checkInfo(input, (key) => `contact.${key}`);
      for (const key of infoKeys) {
        const value = text(input[key]);
        if (value !== null) changes[key] = value;
      }
      if (Object.keys(changes).length > 0) {
        await audited(auth, 'contact.update', { objectType: 'contact', objectId: id }, async (tx) => {
          if ((await listsRepo.updateContact(tx, auth.accountId, id, changes)) === 0)
            throw contactNotFound(rawId);
        });
      }
      return {};
    },

    /** Adds numbers to the blacklist or NPAI list with their info1…info4; numbers already there stay as they are. */
    /**
     * PUT /campaign/:ticket/npai: puts the campaign's NPAI numbers on the account's blacklist, a page at a time
     * in one transaction; answers how many were new (`NPAI`, and `added_contacts` as Pigeon answered before).
     */
    async blacklistCampaignNpai(auth: AuthContext, ticket: string) {
      const id = idIn(ticket);
      const campaign = id === undefined ? undefined : await campaignsRepo.find(db, auth.accountId, id);
      if (!campaign) throw ApiError.notFound(`campaign "${ticket}" not found`);
      const campaignId = Number(campaign.id);
      const now = clock.now();
      const added = await audited(
        auth,
        'blacklist.add_npai',
        { objectType: 'campaign', objectId: campaignId },
        async (tx) => {
          let added = 0;
          for await (const numbers of campaignNpai.numbers(tx, auth.accountId, campaignId)) {
            added += await numberListsRepo.add(tx, 'blacklist', auth.accountId, numbers, now, campaignId);
          }
          return added;
        },
      );
      return { NPAI: added, added_contacts: added };
    },

    async addNumbers(auth: AuthContext, list: NumberList, gsm: ContactInput[]) {
      if (gsm.length > maxContacts) {
        throw ApiError.data(
          `${list}.contacts.gsm has ${gsm.length} numbers; at most ${maxContacts} per request`,
        );
      }
      let invalid = 0;
      const entries = new Map<string, NumberEntry>();
      for (const g of gsm) {
        const number = normalizeNumber(String(g.value ?? ''));
        if (number === undefined) {
          invalid++;
          continue;
        }
        checkInfo(g, (key) => `${list}.contacts.gsm: ${key} of ${number}`);
        if (entries.has(number)) continue;
        entries.set(number, {
          number,
          info1: text(g.info1),
          info2: text(g.info2),
          info3: text(g.info3),
          info4: text(g.info4),
        });
      }
      const now = clock.now();
      const added = await audited(auth, `${list}.add`, { objectType: list }, (tx) =>
        numberListsRepo.addEntries(tx, list, auth.accountId, [...entries.values()], now),
      );
      return { added_contacts: added, invalid };
    },

    /**
     * Puts one number on the blacklist or the NPAI list inside the caller's transaction (delivery outcomes);
     * `campaignId` is the campaign a STOP reply answered.
     */
    async addNumberInTx(
      tx: Executor,
      accountId: number,
      list: NumberList,
      number: string,
      campaignId: number | null = null,
    ): Promise<void> {
      await numberListsRepo.add(tx, list, accountId, [number], clock.now(), campaignId);
    },

    /**
     * Takes one number off the blacklist or the NPAI list inside the caller's transaction (a START reply);
     * a number not listed changes nothing.
     */
    async removeNumberInTx(tx: Executor, accountId: number, list: NumberList, number: string): Promise<void> {
      await numberListsRepo.removeNumber(tx, list, accountId, number);
    },

    /** Which of `numbers` are on the account's blacklist or NPAI list (a lookup's NPAI check). */
    async listedNumbers(
      accountId: number,
      list: NumberList,
      numbers: readonly string[],
    ): Promise<Set<string>> {
      const listed = new Set<string>();
      for (let i = 0; i < numbers.length; i += lookupChunk) {
        const chunk = numbers.slice(i, i + lookupChunk);
        for (const n of await numberListsRepo.present(db, list, accountId, chunk)) listed.add(n);
      }
      return listed;
    },

    /**
     * Erasure, in the caller's transaction: the number leaves every list of the accounts, the blacklist and
     * the NPAI list included (it may then be written to again, as after DELETE /blacklist/contact/:id).
     */
    async eraseNumber(tx: Executor, erasure: Erasure) {
      return {
        contacts: await listsLifecycleRepo.deleteNumber(tx, 'contacts', erasure),
        blacklist: await listsLifecycleRepo.deleteNumber(tx, 'blacklist', erasure),
        npai: await listsLifecycleRepo.deleteNumber(tx, 'npai', erasure),
      };
    },

    /** Deletes up to `limit` of the account's list contacts added before `before` (retention); how many. */
    purgeContacts(accountId: number, before: number, limit: number): Promise<number> {
      return db.transaction().execute((tx) => listsRepo.purgeOlder(tx, accountId, before, limit));
    },

    async numbers(
      auth: AuthContext,
      list: NumberList,
      start?: string,
      length?: string,
    ): Promise<NumbersPageView> {
      const page = parsePage({ start, length });
      const [total, rows] = await Promise.all([
        numberListsRepo.count(db, list, auth.accountId),
        numberListsRepo.page(db, list, auth.accountId, page.start, page.length),
      ]);
      return {
        list: rows.map((r) => ({
          id: idOut(r.id),
          destination: r.number,
          ...infoOut(r),
          date: wallTime(Number(r.created_at)),
          campaign_id: r.campaign_id === null ? null : idOut(r.campaign_id),
        })),
        totalRecords: total,
        totalDisplayRecords: total,
      };
    },

    /** Takes a number off the blacklist or the NPAI list: sends reach it again. */
    async removeNumber(auth: AuthContext, list: NumberList, rawId: string) {
      const id = idIn(rawId);
      if (id === undefined) throw entryNotFound(list, rawId);
      await audited(auth, `${list}.remove`, { objectType: list, objectId: id }, async (tx) => {
        if ((await numberListsRepo.remove(tx, list, auth.accountId, id)) === 0)
          throw entryNotFound(list, rawId);
      });
      return {};
    },
  };
}

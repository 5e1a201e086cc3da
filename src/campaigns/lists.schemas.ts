// What the lists' routes answer (lists.routes.ts): lists, their contacts, and the blacklist and NPAI
// numbers. The view types are the lists service's answers and the console's. Imports nothing but typebox
// and other schema files.
import Type, { type Static } from 'typebox';
import { answer, Id, Nullable, pageTotals, WallTime } from '../http/response-schemas.ts';

const savedList = {
  id: Id,
  contacts: Type.Integer({ description: 'contacts added' }),
  invalid: Type.Integer(),
  duplicates: Type.Integer(),
};
/** POST /list: the list created or added to, and what became of the contacts given. */
export const SavedList = Type.Object(savedList);
export type SavedListView = Static<typeof SavedList>;

/** One list of GET /lists. */
export const ListSummary = Type.Object({
  id: Id,
  name: Type.String(),
  date: WallTime,
  count: Type.Integer(),
});
export type ListSummaryView = Static<typeof ListSummary>;

const info = { info1: Type.String(), info2: Type.String(), info3: Type.String(), info4: Type.String() };

/** One contact of GET /list/:id. */
export const ListContact = Type.Object({ id: Id, destination: Type.String(), ...info });
export type ListContactView = Static<typeof ListContact>;

const listPage = {
  list: Type.Array(ListContact),
  name: Type.String(),
  contacts: Type.Integer({ description: 'contacts in the list' }),
  ...pageTotals,
};
/** GET /list/:id: a page of the list's contacts. */
export const ListPage = Type.Object(listPage);
export type ListPageView = Static<typeof ListPage>;

/** One number of GET /blacklist or GET /npai. */
export const NumberEntry = Type.Object({
  id: Id,
  destination: Type.String(),
  ...info,
  date: WallTime,
  campaign_id: Nullable(Type.String({ description: 'the campaign a STOP answered' })),
});
export type NumberEntryView = Static<typeof NumberEntry>;

const numbersPage = { list: Type.Array(NumberEntry), ...pageTotals };
/** GET /blacklist or GET /npai: a page of its numbers. */
export const NumbersPage = Type.Object(numbersPage);
export type NumbersPageView = Static<typeof NumbersPage>;

export const SavedListAnswer = answer(savedList);
export const ListsAnswer = answer({ lists: Type.Array(ListSummary) });
export const ListPageAnswer = answer(listPage);
/** The envelope alone. */
export const DoneAnswer = answer({});
export const RemovedAnswer = answer({ removed: Type.Integer() });
export const CampaignNpaiAnswer = answer({
  NPAI: Type.Integer({ description: 'NPAI numbers of the campaign' }),
  added_contacts: Type.Integer({ description: 'of them, newly blacklisted' }),
});
export const AddedNumbersAnswer = answer({ added_contacts: Type.Integer(), invalid: Type.Integer() });
export const NumbersAnswer = answer(numbersPage);

// The blacklist and NPAI lookups of small sends, made together. On PostgreSQL each lookup is a round trip to
// another process, one per single send before anything is written (about a fifth of the API's database time
// per send at saturation); the lookups asked for in one event-loop turn, or while the previous ones are read,
// go in one statement instead. SQLite answers in this process, where one at a time costs nothing extra.

import { GroupCommit } from '../shared/group-commit.ts';
import type { Executor } from '../store/db.ts';
import { filtersRepo } from './campaigns.repo.ts';

/** A lookup with more numbers than this is read on its own (it is a statement's worth by itself). */
const maxNumbersTogether = 16;
/** Lookups read in one statement: at most 32 × 16 numbers. */
const maxLookupsTogether = 32;

interface Lookup {
  accountId: number;
  numbers: readonly string[];
  found: { number: string; list: string }[];
}

export type ListedLookup = (
  accountId: number,
  numbers: readonly string[],
) => Promise<{ number: string; list: string }[]>;

/** Which of an account's `numbers` are blacklisted or NPAI: read together with other small sends' lookups. */
export function createListedLookups(db: Executor): ListedLookup {
  const together = new GroupCommit<Lookup>(
    async (lookups) => {
      const accountIds = [...new Set(lookups.map((l) => l.accountId))];
      const numbers = [...new Set(lookups.flatMap((l) => l.numbers))];
      const listed = new Map<string, { number: string; list: string }[]>();
      for (const row of await filtersRepo.listedAmong(db, accountIds, numbers)) {
        const key = `${Number(row.account_id)}:${row.number}`;
        const rows = listed.get(key);
        if (rows) rows.push(row);
        else listed.set(key, [row]);
      }
      for (const lookup of lookups) {
        for (const number of lookup.numbers) {
          for (const row of listed.get(`${lookup.accountId}:${number}`) ?? []) {
            lookup.found.push({ number: row.number, list: row.list });
          }
        }
      }
    },
    // Each send whose lookup failed answers its own error (below); nothing to log once for all of them.
    () => {},
    { maxItems: maxLookupsTogether },
  );

  return async (accountId, numbers) => {
    if (numbers.length > maxNumbersTogether) return filtersRepo.listed(db, accountId, numbers);
    const lookup: Lookup = { accountId, numbers, found: [] };
    // A failed statement is read again alone, so the send answers the database's own error.
    if (!(await together.add(lookup))) return filtersRepo.listed(db, accountId, numbers);
    return lookup.found;
  };
}

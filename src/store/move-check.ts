// The proof of a move (store/move.ts): every table's row count on both sides, and the ledger, account by
// account: its credits and the sum of its ledger lines. The source is read in the snapshot the copy was made
// from; the target after the copy committed.
import type BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import type { Executor } from './db.ts';
import { tableNames } from './schema.ts';

export type CheckLine =
  | { table: string; source: number; target: number; ok: boolean }
  | {
      check: 'ledger';
      accounts: number;
      ledger_lines: number;
      credits: string;
      ledger_sum: string;
      /** The first accounts that differ (up to 20), each side's figures. */
      differences: LedgerDifference[];
      ok: boolean;
    };

export interface LedgerDifference {
  account_id: string;
  source: AccountFigures | null;
  target: AccountFigures | null;
}

interface AccountFigures {
  credits: string;
  ledger_sum: string;
  ledger_lines: string;
}

const shownDifferences = 20;

/** Reports one line per table and one for the ledger; answers whether every figure is equal. */
export async function checkMove(
  source: BetterSqlite3.Database,
  target: Executor,
  report: (line: CheckLine) => void,
): Promise<boolean> {
  let ok = true;
  for (const table of tableNames) {
    const from = Number((source.prepare(`select count(*) as n from "${table}"`).get() as { n: number }).n);
    const { rows } = await sql<{ n: string }>`select count(*)::text as n from ${sql.table(table)}`.execute(
      target,
    );
    const to = Number(rows[0].n);
    report({ table, source: from, target: to, ok: from === to });
    ok &&= from === to;
  }
  const ledgerOk = await checkLedger(source, target, report);
  return ok && ledgerOk;
}

// Integers are read exact on both sides (bigint on SQLite, text on PostgreSQL) and compared as text.
const perAccount = `
  select cast(a.id as text) as account_id, cast(a.credits as text) as credits,
         cast(coalesce(l.total, 0) as text) as ledger_sum, cast(coalesce(l.lines, 0) as text) as ledger_lines
  from accounts a
  left join (select account_id, sum(delta) as total, count(*) as lines from credit_ledger group by account_id) l
    on l.account_id = a.id`;

async function checkLedger(
  source: BetterSqlite3.Database,
  target: Executor,
  report: (line: CheckLine) => void,
): Promise<boolean> {
  const before = new Map(
    (source.prepare(perAccount).all() as (AccountFigures & { account_id: string })[]).map((r) => [
      r.account_id,
      r,
    ]),
  );
  const { rows } = await sql<AccountFigures & { account_id: string }>`${sql.raw(perAccount)}`.execute(target);
  const after = new Map(rows.map((r) => [r.account_id, r]));
  const differences: LedgerDifference[] = [];
  let differing = 0;
  for (const id of new Set([...before.keys(), ...after.keys()])) {
    const s = before.get(id);
    const t = after.get(id);
    const same =
      s !== undefined &&
      t !== undefined &&
      s.credits === t.credits &&
      s.ledger_sum === t.ledger_sum &&
      s.ledger_lines === t.ledger_lines;
    if (same) continue;
    differing++;
    if (differences.length < shownDifferences)
      differences.push({ account_id: id, source: figures(s), target: figures(t) });
  }
  const total = (key: 'credits' | 'ledger_sum' | 'ledger_lines') =>
    [...before.values()].reduce((sum, r) => sum + BigInt(r[key]), 0n);
  report({
    check: 'ledger',
    accounts: before.size,
    ledger_lines: Number(total('ledger_lines')),
    credits: String(total('credits')),
    ledger_sum: String(total('ledger_sum')),
    differences,
    ok: differing === 0,
  });
  return differing === 0;
}

const figures = (r: (AccountFigures & { account_id: string }) | undefined): AccountFigures | null =>
  r === undefined ? null : { credits: r.credits, ledger_sum: r.ledger_sum, ledger_lines: r.ledger_lines };

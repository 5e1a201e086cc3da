import { insertRows } from '../store/bulk-insert.ts';
import type { Db, Executor } from '../store/db.ts';
import { bindShape, compileShape, type QueryShape } from './query-shape.ts';

export interface NewLink {
  code: string;
  campaign_id: number;
  message_seq: number;
  account_id: number;
  long_url: string;
}

export interface LinkTargetRow {
  id: number;
  code: string;
  campaign_id: number;
  message_seq: number;
  account_id: number;
  long_url: string;
  message_id: number | null;
  gsmsmsid: string | null;
  info1: string | null;
  info2: string | null;
  info3: string | null;
  info4: string | null;
}

export interface NewClick {
  link_id: number;
  campaign_id: number;
  account_id: number;
  message_seq: number;
  clicked_at: number;
  user_agent: string | null;
  referer: string | null;
  ip: string | null;
}

/** Rows per INSERT: 6 columns each, far below SQLite's 32,766 bound parameters. */
const insertBatch = 1000;

const linkColumns = [
  'code',
  'campaign_id',
  'message_seq',
  'account_id',
  'long_url',
  'clicks',
  'created_at',
] as const;

export const linksRepo = {
  /** A campaign's links, 100,000 at a time for a large send: statements compiled once per batch size. */
  async insertMany(db: Executor, links: NewLink[], now: number): Promise<void> {
    const rows = links.map((l) => [l.code, l.campaign_id, l.message_seq, l.account_id, l.long_url, 0, now]);
    await insertRows(db, 'links', linkColumns, rows, insertBatch);
  },

  /**
   * The link behind a short code, with what a CLICKER event tells of it besides its counter: the
   * recipient's gsmsmsid and, for a list campaign, the contact's fields (message_id is null for a link
   * without a message). Codes are unique and global: the redirect is not scoped by account.
   */
  async findTarget(db: Executor, code: string): Promise<LinkTargetRow | undefined> {
    return db
      .selectFrom('links as l')
      .leftJoin('messages as m', (join) =>
        join.onRef('m.campaign_id', '=', 'l.campaign_id').onRef('m.seq', '=', 'l.message_seq'),
      )
      .leftJoin('contacts as c', 'c.id', 'm.contact_id')
      .select([
        'l.id',
        'l.code',
        'l.campaign_id',
        'l.message_seq',
        'l.account_id',
        'l.long_url',
        'm.id as message_id',
        'm.gsmsmsid',
        'c.info1',
        'c.info2',
        'c.info3',
        'c.info4',
      ])
      .where('l.code', '=', code)
      .executeTakeFirst();
  },
};

const clickColumns = [
  'link_id',
  'campaign_id',
  'account_id',
  'message_seq',
  'clicked_at',
  'user_agent',
  'referer',
  'ip',
] as const satisfies readonly (keyof NewClick)[];

/** Row counts of the click INSERT shapes: a batch is cut into these, so a handful of SQL texts cover all sizes. */
const insertSizes = [256, 128, 64, 32, 16, 8, 4, 2, 1];
/** Id counts of the counter UPDATE shapes; a list is padded up to one by repeating its last id. */
const maxIdsPerUpdate = 512;

/**
 * The click path's statements, compiled once per size for `db`'s dialect (see query-shape.ts): with 64
 * clicks per transaction, building them with Kysely each time cost as much as running them.
 */
export function createClickStatements(db: Db) {
  const inserts = new Map<number, QueryShape>();
  const updates = new Map<number, QueryShape>();

  const insertShape = (rows: number): QueryShape => {
    let shape = inserts.get(rows);
    if (!shape) {
      shape = compileShape(rows * clickColumns.length, (input) =>
        db.insertInto('clicks').values(
          Array.from({ length: rows }, (_, r) => {
            const row: Record<string, number> = {};
            clickColumns.forEach((column, c) => {
              row[column] = input(r * clickColumns.length + c);
            });
            return row as unknown as NewClick;
          }),
        ),
      );
      inserts.set(rows, shape);
    }
    return shape;
  };

  const updateShape = (ids: number): QueryShape => {
    let shape = updates.get(ids);
    if (!shape) {
      shape = compileShape(ids + 1, (input) =>
        db
          .updateTable('links')
          .set((eb) => ({ clicks: eb('clicks', '+', input(0)) }))
          .where(
            'id',
            'in',
            Array.from({ length: ids }, (_, i) => input(i + 1)),
          )
          .returning(['id', 'clicks']),
      );
      updates.set(ids, shape);
    }
    return shape;
  };

  return {
    async insertClicks(tx: Executor, clicks: NewClick[]): Promise<void> {
      let done = 0;
      for (const size of insertSizes) {
        while (clicks.length - done >= size) {
          const values: unknown[] = [];
          for (let r = done; r < done + size; r++) {
            const click = clicks[r];
            for (const column of clickColumns) values.push(click[column]);
          }
          await tx.executeQuery(bindShape(insertShape(size), values));
          done += size;
        }
      }
    },

    /**
     * Adds `by` to the click counter of each link in `linkIds` (duplicates are harmless: `in` matches a row
     * once) and returns the counters after the change, which CLICKER's clicks_on_link needs.
     */
    async addClicks(tx: Executor, linkIds: number[], by: number): Promise<{ id: number; clicks: number }[]> {
      const counters: { id: number; clicks: number }[] = [];
      for (let i = 0; i < linkIds.length; i += maxIdsPerUpdate) {
        const ids = linkIds.slice(i, i + maxIdsPerUpdate);
        let size = 1;
        while (size < ids.length) size *= 2;
        const values: unknown[] = [by, ...ids];
        while (values.length < size + 1) values.push(ids[ids.length - 1]);
        const result = await tx.executeQuery<{ id: number; clicks: number }>(
          bindShape(updateShape(size), values),
        );
        counters.push(...result.rows);
      }
      return counters;
    },
  };
}

export type ClickStatements = ReturnType<typeof createClickStatements>;

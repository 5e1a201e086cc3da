import { type Selectable, sql } from 'kysely';
import { insertBatch, insertRows } from '../store/bulk-insert.ts';
import type { Db, DialectName, Executor } from '../store/db.ts';
import { runPrepared, slot } from '../store/prepared.ts';
import type { ClicksTable, LinksTable } from '../store/schema.ts';

/** What a link's CLICKER events tell of its recipient, as the redirect and the fold read it. */
const clickerColumns = ['clicker', 'gsmsmsid', 'info1', 'info2', 'info3', 'info4'] as const;

/** A list contact's fields, as a link's CLICKER events tell them. */
export type ContactInfo = Pick<Selectable<LinksTable>, 'info1' | 'info2' | 'info3' | 'info4'>;

export interface NewLink
  extends Pick<Selectable<LinksTable>, 'code' | 'campaign_id' | 'message_seq' | 'account_id' | 'long_url'> {
  /** What the link's CLICKER events tell of its recipient: fixed when the campaign is sent. */
  gsmsmsid: Selectable<LinksTable>['gsmsmsid'];
  /** The list contact the message went to; null for a recipient given by number. */
  contact: ContactInfo | null;
}

/**
 * A link as the redirect and the fold read it, with the CLICKER context kept on it (`clicker` is 1 when
 * its clicks raise CLICKER events, 0 for a link stored without a message).
 */
export type LinkTargetRow = Pick<
  Selectable<LinksTable>,
  'id' | 'code' | 'campaign_id' | 'message_seq' | 'account_id' | 'long_url' | (typeof clickerColumns)[number]
>;

/** A link's click counter after a change. */
export type LinkCounter = Pick<Selectable<LinksTable>, 'id' | 'clicks'>;

/** A click row as the redirect stores it. */
export type NewClick = Omit<Selectable<ClicksTable>, 'id'>;

/** A stored click as the fold reads it: what the counter and the CLICKER event need. */
export type StoredClick = Pick<
  Selectable<ClicksTable>,
  'id' | 'link_id' | 'campaign_id' | 'account_id' | 'clicked_at' | 'user_agent'
>;

/** Links per target lookup. */
const maxIdsPerLookup = 500;

/** Rows per INSERT: at most 12 columns each, below SQLite's 32,766 bound parameters. */
const linkBatchRows = 1000;

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

/**
 * Rows per click INSERT: a group of clicks goes in as one statement up to this, in statements of this many
 * and one of the rest beyond (so at most this many SQL texts, one per size, each compiled once).
 */
const maxRowsPerInsert = 64;
/** Id counts of the counter UPDATE statements; a list is padded up to one by repeating its last id. */
const maxIdsPerUpdate = 512;

const linkColumns = [
  'code',
  'campaign_id',
  'message_seq',
  'account_id',
  'long_url',
  'clicks',
  'created_at',
] as const;
const infoColumns = ['info1', 'info2', 'info3', 'info4'] as const;
/**
 * The columns a batch of links is inserted with: a context column that is null on every link of the batch
 * is left to its default (null), so a send without gsmsmsid or contact fields binds no more values than the
 * link itself; `clicker` is left to its default, 1 (migration 010), on every link stored here.
 */
const insertColumns = {
  bare: linkColumns,
  gsmsmsid: [...linkColumns, 'gsmsmsid'],
  contact: [...linkColumns, ...infoColumns],
  both: [...linkColumns, 'gsmsmsid', ...infoColumns],
} as const;

export const linksRepo = {
  /** Retention: deletes up to `limit` of a campaign's links, with their clicks first; how many links. */
  async purgeCampaign(db: Executor, campaignId: number, limit: number): Promise<number> {
    const rows = await db
      .selectFrom('links')
      .select('id')
      .where('campaign_id', '=', campaignId)
      .limit(limit)
      .execute();
    if (rows.length === 0) return 0;
    const ids = rows.map((r) => r.id);
    await db.deleteFrom('clicks').where('link_id', 'in', ids).execute();
    await db.deleteFrom('links').where('id', 'in', ids).execute();
    return ids.length;
  },

  /** A campaign's links, 100,000 at a time for a large send: statements compiled once per batch size. */
  async insertMany(db: Executor, links: NewLink[], now: number): Promise<void> {
    const withGsmsmsid = links.some((l) => l.gsmsmsid !== null);
    const withContact = links.some((l) => l.contact !== null);
    const columns =
      insertColumns[withGsmsmsid ? (withContact ? 'both' : 'gsmsmsid') : withContact ? 'contact' : 'bare'];
    const rows = links.map((l) => {
      const row: unknown[] = [l.code, l.campaign_id, l.message_seq, l.account_id, l.long_url, 0, now];
      if (withGsmsmsid) row.push(l.gsmsmsid);
      if (withContact) {
        const c = l.contact;
        if (c === null) row.push(null, null, null, null);
        else row.push(c.info1, c.info2, c.info3, c.info4);
      }
      return row;
    });
    await insertRows(db, 'links', columns, rows, linkBatchRows);
  },

  /**
   * The link behind a short code, with what a CLICKER event tells of it besides its counter: the
   * recipient's gsmsmsid and, for a list campaign, the contact's fields, kept on the link's own row.
   * Codes are unique and global: the redirect is not scoped by account.
   */
  async findTarget(db: Executor, code: string): Promise<LinkTargetRow | undefined> {
    return targets(db).where('code', '=', code).executeTakeFirst();
  },

  /** The same, for links by id (the fold's links that this process has not resolved yet). */
  async findTargetsById(db: Executor, ids: number[]): Promise<LinkTargetRow[]> {
    const rows: LinkTargetRow[] = [];
    for (let i = 0; i < ids.length; i += maxIdsPerLookup) {
      rows.push(
        ...(await targets(db)
          .where('id', 'in', ids.slice(i, i + maxIdsPerLookup))
          .execute()),
      );
    }
    return rows;
  },

  /**
   * An id such that every click up to it is committed (or rolled back for good): the fold never reads
   * past it, so it never steps over a click that commits later with a smaller id. SQLite has one writer,
   * so that is simply the largest id. PostgreSQL draws ids when inserts run but commits them in any
   * order: a SHARE lock waits for the transactions inserting clicks to end (and holds new ones back for
   * that long only, at most `lock_timeout`; the fold then tries again later), and the largest id then is
   * safe. Without the lock when nothing past `after` is stored.
   */
  async clickHorizon(db: Db, dialect: DialectName, after: number): Promise<number> {
    const largest = async (q: Executor) =>
      Number(
        (
          await q
            .selectFrom('clicks')
            .select((eb) => eb.fn.max('id').as('id'))
            .executeTakeFirst()
        )?.id ?? 0,
      );
    const seen = await largest(db);
    if (dialect !== 'postgres' || seen <= after) return seen;
    try {
      return await db.transaction().execute(async (tx) => {
        await sql`set local lock_timeout = '100ms'`.execute(tx);
        await sql`lock table clicks in share mode`.execute(tx);
        return largest(tx);
      });
    } catch (error) {
      // lock_not_available: a long insert holds the table; fold up to where it was, later.
      if ((error as { code?: unknown }).code === '55P03') return after;
      throw error;
    }
  },

  /** The last click id the fold has handled. */
  async foldCursor(db: Executor): Promise<number> {
    const row = await db
      .selectFrom('cursors')
      .select('position')
      .where('name', '=', 'clicks')
      .executeTakeFirstOrThrow();
    return row.position;
  },

  /**
   * The fold's turn: its cursor, locked for this transaction, or undefined while another process folds
   * (PostgreSQL: the row is locked, skipped rather than waited for; it will fold these clicks anyway).
   * SQLite has one writer, so its write transaction is the turn.
   */
  async takeFoldCursor(tx: Executor, dialect: DialectName): Promise<number | undefined> {
    let query = tx.selectFrom('cursors').select('position').where('name', '=', 'clicks');
    if (dialect === 'postgres') query = query.forUpdate().skipLocked();
    return (await query.executeTakeFirst())?.position;
  },

  async moveFoldCursor(db: Executor, position: number): Promise<void> {
    await db.updateTable('cursors').set({ position }).where('name', '=', 'clicks').execute();
  },

  /** Up to `limit` clicks with `after` < id <= `through`, in click order. */
  async clicksBetween(db: Executor, after: number, through: number, limit: number): Promise<StoredClick[]> {
    return db
      .selectFrom('clicks')
      .select(['id', 'link_id', 'campaign_id', 'account_id', 'clicked_at', 'user_agent'])
      .where('id', '>', after)
      .where('id', '<=', through)
      .orderBy('id')
      .limit(limit)
      .execute();
  },

  /**
   * Inserts the clicks in order, up to `maxRowsPerInsert` per statement (each size compiled once, see
   * store/prepared.ts: with 64 clicks per transaction, building them with Kysely each time cost as much as
   * running them). Returns their ids where the dialect tells them for free (SQLite: the last rowid of each
   * statement, whose rows take consecutive ids), undefined otherwise (PostgreSQL).
   */
  async insertClicks(tx: Executor, clicks: NewClick[]): Promise<number[] | undefined> {
    let ids: number[] | undefined = [];
    for (let done = 0; done < clicks.length; ) {
      const size = Math.min(maxRowsPerInsert, clicks.length - done);
      const values: unknown[] = [];
      for (let r = done; r < done + size; r++) {
        const click = clicks[r];
        for (const column of clickColumns) values.push(click[column]);
      }
      const { insertId } = await insertBatch(tx, 'clicks', clickColumns, size, values);
      if (insertId === undefined) ids = undefined;
      else for (let id = Number(insertId) - size + 1; id <= Number(insertId); id++) ids?.push(id);
      done += size;
    }
    return ids;
  },

  /**
   * Adds `by` to the click counter of each link in `linkIds` (duplicates are harmless: `in` matches a row
   * once) and returns the counters after the change, which CLICKER's clicks_on_link needs. Lists are padded
   * up to a power of two by repeating their last id, so few statements are compiled.
   */
  async addClicks(tx: Executor, linkIds: number[], by: number): Promise<LinkCounter[]> {
    const counters: LinkCounter[] = [];
    for (let i = 0; i < linkIds.length; i += maxIdsPerUpdate) {
      const ids = linkIds.slice(i, i + maxIdsPerUpdate);
      let size = 1;
      while (size < ids.length) size *= 2;
      const values: unknown[] = [by, ...ids];
      while (values.length < size + 1) values.push(ids[ids.length - 1]);
      const rows = await runPrepared<LinkCounter>(
        tx,
        `links.addClicks:${size}`,
        (q) =>
          q
            .updateTable('links')
            .set((eb) => ({ clicks: eb('clicks', '+', slot(0) as unknown as number) }))
            .where(
              'id',
              'in',
              Array.from({ length: size }, (_, n) => slot(n + 1) as unknown as number),
            )
            .returning(['id', 'clicks']),
        values,
      );
      counters.push(...rows);
    }
    return counters;
  },
};

function targets(db: Executor) {
  return db
    .selectFrom('links')
    .select(['id', 'code', 'campaign_id', 'message_seq', 'account_id', 'long_url', ...clickerColumns]);
}

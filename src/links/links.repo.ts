import type { Executor } from '../store/db.ts';

export interface NewLink {
  code: string;
  campaign_id: number;
  message_seq: number;
  account_id: number;
  long_url: string;
}

/** Rows per INSERT: 6 columns each, far below SQLite's 32,766 bound parameters. */
const insertBatch = 1000;

export const linksRepo = {
  async insertMany(db: Executor, links: NewLink[], now: number): Promise<void> {
    for (let i = 0; i < links.length; i += insertBatch) {
      const batch = links.slice(i, i + insertBatch).map((link) => ({ ...link, clicks: 0, created_at: now }));
      await db.insertInto('links').values(batch).execute();
    }
  },
};

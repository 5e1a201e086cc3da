// A part is written at its submit and updated once, by its receipt, a few hundred to a statement each way. On
// PostgreSQL that update touches no indexed column, so it can stay on the part's page without new index
// entries (HOT), if the page has room: migration 038 fills pages of `message_parts` only to 40 %.
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { messagePartsRepo } from '../../src/delivery/message-parts.repo.ts';
import { describeOnPostgres } from '../helpers/harness.ts';
import { counted } from '../helpers/pg-stats.ts';

describeOnPostgres('message parts', (h) => {
  it('the receipts of a batch of parts written together update them in place, without new index entries', async () => {
    const { db } = h().deps.store;
    const ids = await db.transaction().execute(async (tx) => {
      const { rows } = await sql<{ id: string }>`insert into message_parts
          (message_id, part_no, smsc_id, stat, dlr_status, updated_at)
        select g, 1, 'smsc-' || g, null, null, 0 from generate_series(1, 500) g returning id`.execute(tx);
      return rows.map((r) => Number(r.id));
    });
    const { updated, hotUpdated } = await counted(db, 'message_parts', (tx) =>
      messagePartsRepo.updateParts(tx, ids, 'DELIVRD', 0, 1),
    );
    expect(updated).toBe(500);
    expect(hotUpdated).toBe(500);
  });
});

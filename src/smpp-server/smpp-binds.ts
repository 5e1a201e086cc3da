// A user's binds across every process that runs the SMPP server, so that `max_binds` and `tps` are the user's,
// not each process's. A bind is a row of `smpp_binds` named by this server (a random id), claimed only while
// the user has fewer than `max_binds` alive anywhere; the server renews its rows at each `sync` and they stop
// counting `ttlMs` after its last renewal, so a process that dies frees its user's binds within that time.
// `sync` also learns, per user bound here, the share of the user's binds this server holds: its part of the
// user's `tps` (a client spreads its submits over its binds).
import { randomUUID } from 'node:crypto';
import type { Clock } from '../shared/clock.ts';
import type { Db } from '../store/db.ts';
import { smppBindsRepo } from './smpp-binds.repo.ts';

export type BindRegistry = ReturnType<typeof createBindRegistry>;

export function createBindRegistry(deps: {
  db: Db;
  dialect: 'sqlite' | 'postgres';
  clock: Clock;
  /** How long a bind counts after its server's last renewal. */
  ttlMs: number;
}) {
  const { db, clock, ttlMs } = deps;
  const server = randomUUID();
  /** Binds held here: bind id → user id. */
  const held = new Map<number, number>();
  /** Per user bound here, the share of its alive binds held here (1 when all are). */
  let shares = new Map<number, number>();
  /** Claims under way: their rows may be written and not yet in `held`, so a sync then deletes none of ours. */
  let claiming = 0;

  /** Per user of `users`, the share of its alive binds (`alive`, counted per server) that this server holds. */
  function sharesOf(
    users: readonly number[],
    alive: readonly { smpp_user_id: number; server: string; n: number }[],
  ): Map<number, number> {
    const all = new Map<number, number>();
    const mine = new Map<number, number>();
    for (const row of alive) {
      const userId = Number(row.smpp_user_id);
      all.set(userId, (all.get(userId) ?? 0) + Number(row.n));
      if (row.server === server) mine.set(userId, Number(row.n));
    }
    return new Map(
      users.map((userId) => {
        const total = all.get(userId) ?? 0;
        return [userId, total > 0 ? (mine.get(userId) ?? 0) / total : 1];
      }),
    );
  }

  return {
    /** Records a bind of `userId` if its binds everywhere are fewer than `maxBinds`: the bind's id, or undefined. */
    async claim(userId: number, maxBinds: number): Promise<number | undefined> {
      const now = clock.now();
      claiming++;
      try {
        const claimed = await db.transaction().execute(async (tx) => {
          if (deps.dialect === 'postgres') await smppBindsRepo.lockUser(tx, userId);
          const id = await smppBindsRepo.claim(tx, {
            userId,
            server,
            maxBinds,
            now,
            aliveUntil: now + ttlMs,
          });
          // The user's share here at once, not at the next sync: its submits may follow the bind's answer.
          return id === undefined ? undefined : { id, alive: await smppBindsRepo.alive(tx, [userId], now) };
        });
        if (claimed === undefined) return undefined;
        held.set(claimed.id, userId);
        shares = new Map([...shares, ...sharesOf([userId], claimed.alive)]);
        return claimed.id;
      } finally {
        claiming--;
      }
    },

    /** The bind closed: its row deleted now, or by the next sync if the database does not answer. */
    release(id: number): void {
      if (!held.delete(id)) return;
      smppBindsRepo.release(db, id).catch(() => {});
    },

    /** Renews this server's binds, forgets its stale rows and the dead servers', and reads the users' shares. */
    async sync(): Promise<void> {
      const now = clock.now();
      // Rows of ours not held: dropped if written before this sync began and by no claim still under way.
      await smppBindsRepo.renew(db, server, [...held.keys()], now + ttlMs, claiming === 0 ? now : undefined);
      await smppBindsRepo.pruneDead(db, now - ttlMs);
      const users = [...new Set(held.values())];
      shares = users.length === 0 ? new Map() : sharesOf(users, await smppBindsRepo.alive(db, users, now));
    },

    /** This server's part of the user's `tps`: its share of the user's binds, at least one a second. */
    tpsHere(userId: number, tps: number): number {
      if (tps <= 0) return 0;
      const share = shares.get(userId) ?? 1;
      return Math.max(1, Math.round(tps * Math.min(1, share)));
    },
  };
}

// The click fold: turns stored clicks into link counters and CLICKER events, thousands per transaction, a
// few hundred milliseconds after the redirects that stored them. The fold (`createClickFold`) is wired with
// the links service in deps.ts; its timer (`createClickFolder`) runs beside each link server. On PostgreSQL
// the folds of several processes take turns, and any of them folds the clicks a stopped or killed process
// left behind.
import type { Logger } from 'pino';
import { clickerPayload } from '../events/event-bodies.ts';
import type { Clock } from '../shared/clock.ts';
import { createPollLoop } from '../shared/poll-loop.ts';
import { zonedTime } from '../shared/zoned-time.ts';
import type { Db, DialectName, Executor } from '../store/db.ts';
import { appendEvents, type NewEvent } from '../store/outbox.ts';
import { deviceOf } from './device.ts';
import { linksRepo, type NewClick, type StoredClick } from './links.repo.ts';
import { type LinksService, type LinkTarget, withRetry } from './links.service.ts';

/** Stored clicks kept for the fold (see `recent`): a few folds' worth, about 300 bytes each. */
const maxRecentClicks = 50_000;

export type ClickFold = ReturnType<typeof createClickFold>;

export function createClickFold(deps: {
  db: Db;
  dialect: DialectName;
  clock: Clock;
  /** Zone of the CLICKER event's date. */
  timezone: string;
  links: Pick<LinksService, 'targetsById' | 'onClicksStored'>;
}) {
  const { db, dialect, clock, timezone, links } = deps;

  // CLICKER dates are `Y-m-d H:i:s` on the wall clock of the configured zone; formatted once per second.
  const { wallTime } = zonedTime(timezone);

  /** The CLICKER event of a click (API.md), or null for a link without a message (nobody to report). */
  function clickerEvent(click: StoredClick, target: LinkTarget, nth: number): NewEvent | null {
    if (!target.clicker) return null;
    return {
      account_id: click.account_id,
      campaign_id: click.campaign_id,
      type: 'CLICKER',
      payload: clickerPayload(target.clicker, wallTime(click.clicked_at), deviceOf(click.user_agent), nth),
    };
  }

  /**
   * Clicks this process stored lately, in id order, with their ids: the fold's copy of the rows it is
   * about to read, so that it reads them only when this copy does not cover them exactly (clicks of another
   * process in between, ids unknown on PostgreSQL, a rolled-back insert, or more than `maxRecentClicks`
   * waiting). The database stays the only record; this only saves reading back what was just written.
   */
  let recent: StoredClick[] = [];

  function rememberStored(clicks: readonly NewClick[], ids: readonly number[] | undefined): void {
    if (!ids) return;
    if (recent.length + clicks.length > maxRecentClicks) recent = [];
    for (let i = 0; i < clicks.length; i++) {
      const { link_id, campaign_id, account_id, clicked_at, user_agent } = clicks[i];
      recent.push({ id: ids[i], link_id, campaign_id, account_id, clicked_at, user_agent });
    }
  }

  /** The clicks with ids cursor+1 … cursor+n if this process holds every one of them, else undefined. */
  function recentClicks(cursor: number, n: number): StoredClick[] | undefined {
    let folded = 0;
    while (folded < recent.length && recent[folded].id <= cursor) folded++;
    if (folded > 0) recent = recent.slice(folded);
    if (recent.length < n || recent[0].id !== cursor + 1 || recent[n - 1].id !== cursor + n) return undefined;
    return recent.slice(0, n);
  }

  links.onClicksStored(rememberStored);

  /**
   * One fold: up to `limit` clicks past the cursor (and not past `horizon`, see `clickHorizon`), in click
   * order. Each link's counter is raised once by its number of clicks (ascending link id), each click gets
   * its number on its link from the new counter and its CLICKER event, and the cursor moves past them, all
   * in one transaction: a counter, its events and the cursor never disagree, and no click is folded twice.
   * Returns how many clicks were folded (0 also when another process holds the turn).
   */
  async function fold(tx: Executor, horizon: number, limit: number): Promise<number> {
    const cursor = await linksRepo.takeFoldCursor(tx, dialect);
    if (cursor === undefined || cursor >= horizon) return 0;
    const clicks =
      recentClicks(cursor, Math.min(horizon - cursor, limit)) ??
      (await linksRepo.clicksBetween(tx, cursor, horizon, limit));
    // Fewer than `limit` clicks means none is left up to the horizon (ids of rolled-back inserts are gaps).
    await linksRepo.moveFoldCursor(tx, clicks.length < limit ? horizon : clicks[clicks.length - 1].id);
    if (clicks.length === 0) return 0;
    const perLink = new Map<number, number>();
    for (const click of clicks) perLink.set(click.link_id, (perLink.get(click.link_id) ?? 0) + 1);
    const idsByCount = new Map<number, number[]>();
    for (const id of [...perLink.keys()].sort((a, b) => a - b)) {
      const by = perLink.get(id)!;
      const ids = idsByCount.get(by);
      if (ids) ids.push(id);
      else idsByCount.set(by, [id]);
    }
    const totals = new Map<number, number>();
    for (const [by, ids] of idsByCount) {
      for (const counter of await linksRepo.addClicks(tx, ids, by)) totals.set(counter.id, counter.clicks);
    }
    const targets = await links.targetsById(tx, perLink.keys());
    const seen = new Map<number, number>();
    const events: NewEvent[] = [];
    for (const click of clicks) {
      const total = totals.get(click.link_id);
      const target = targets.get(click.link_id);
      // Links are never deleted; a click of a missing one is passed over rather than stopping the fold.
      if (total === undefined || target === undefined) continue;
      const before = seen.get(click.link_id) ?? 0;
      seen.set(click.link_id, before + 1);
      const event = clickerEvent(click, target, total - perLink.get(click.link_id)! + before + 1);
      if (event) events.push(event);
    }
    await appendEvents(tx, events, clock.now());
    return clicks.length;
  }

  return {
    /**
     * Folds up to `limit` stored clicks into their links' counters and CLICKER events (see `fold`); the
     * click folder calls it shortly after clicks are stored. Returns how many clicks were folded.
     */
    async foldClicks(limit: number): Promise<number> {
      const horizon = await linksRepo.clickHorizon(db, dialect, await linksRepo.foldCursor(db));
      return withRetry(() => db.transaction().execute((tx) => fold(tx, horizon, limit)));
    },

    /** When the oldest click the fold has not counted yet was stored (its lag), undefined when none waits. */
    async oldestUnfoldedAt(): Promise<number | undefined> {
      const cursor = await linksRepo.foldCursor(db);
      const [first] = await linksRepo.clicksBetween(db, cursor, Number.MAX_SAFE_INTEGER, 1);
      return first?.clicked_at;
    },
  };
}

interface ClickFolderOptions {
  /** Clicks per fold transaction. */
  batchSize: number;
  /** How long after a group of clicks is stored the fold runs: clicks arriving meanwhile join the fold. */
  delayMs: number;
  /** How often an idle folder looks for clicks stored by other processes (or before a restart). */
  pollMs: number;
}

const defaultClickFolderOptions: ClickFolderOptions = {
  batchSize: 10_000,
  delayMs: 500,
  pollMs: 1000,
};

/** The fold's timer: folds `delayMs` after clicks are stored here, and every `pollMs` for the others'. */
export function createClickFolder(deps: {
  fold: Pick<ClickFold, 'foldClicks'>;
  links: Pick<LinksService, 'onClicksStored'>;
  log: Pick<Logger, 'error'>;
  options?: Partial<ClickFolderOptions>;
  /** Told after a fold committed clicks (and so, maybe, CLICKER events): a nudge to the webhook dispatcher. */
  folded?: () => void;
}) {
  const { fold, links, log } = deps;
  const { batchSize, delayMs, pollMs } = { ...defaultClickFolderOptions, ...deps.options };
  let timer: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;

  const loop = createPollLoop({
    pollMs,
    // A full batch means more may be waiting: fold again at once.
    step: async () => {
      const clicks = await fold.foldClicks(batchSize);
      if (clicks > 0) deps.folded?.();
      return clicks === batchSize;
    },
    onError: (error) => log.error({ err: error }, 'click fold failed; retried at the next poll'),
  });

  return {
    start(): void {
      unsubscribe ??= links.onClicksStored(() => {
        timer ??= setTimeout(() => {
          timer = undefined;
          loop.wake();
        }, delayMs);
      });
      loop.start();
    },

    /** Stops the loop, then folds what is left (the link server is closed first, its clicks stored). */
    async stop(): Promise<void> {
      unsubscribe?.();
      unsubscribe = undefined;
      clearTimeout(timer);
      timer = undefined;
      await loop.stop();
      try {
        while ((await fold.foldClicks(batchSize)) === batchSize);
      } catch (error) {
        log.error({ err: error }, 'click fold failed at shutdown; the next start folds the rest');
      }
    },
  };
}

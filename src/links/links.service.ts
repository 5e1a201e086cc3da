// Short links: codes for campaigns, the redirect, and click recording.
import type { IncomingHttpHeaders } from 'node:http';
import type { Logger } from 'pino';
import type { Clock } from '../shared/clock.ts';
import { GroupCommit } from '../shared/group-commit.ts';
import { zonedTime } from '../shared/zoned-time.ts';
import type { Db, DialectName, Executor } from '../store/db.ts';
import { appendEvents, type NewEvent } from '../store/outbox.ts';
import { type ClickerTemplate, clickerPayload, clickerTemplate } from './clicker-payload.ts';
import { truncateIp } from './client-ip.ts';
import { deviceOf } from './device.ts';
import {
  type LinkTargetRow,
  linksRepo,
  type NewClick,
  type NewLink,
  type StoredClick,
} from './links.repo.ts';
import { locationOf } from './location.ts';
import { isPreviewRequest } from './preview-fetchers.ts';
import { isShortCode, newShortCodes } from './short-code.ts';

export type LinksService = ReturnType<typeof createLinksService>;

/** What a short code points at, as the redirect needs it. */
export interface LinkTarget {
  id: number;
  campaignId: number;
  accountId: number;
  messageSeq: number;
  longUrl: string;
  /** The long URL as a valid `Location` header value. */
  location: string;
  code: string;
  /**
   * The link's CLICKER payload around what changes per click, or null for a link without a message. Fixed
   * at send time (the message's gsmsmsid, its contact's fields, kept on the link's row), so built once with
   * the link and cached.
   */
  clicker: ClickerTemplate | null;
}

/** One request for a short link, as the link server saw it. */
export interface Visit {
  /** HEAD requests are redirected but never counted. */
  head: boolean;
  headers: IncomingHttpHeaders;
  /** The client address (already resolved through a trusted proxy); stored truncated. */
  address: string | undefined;
}

/** counted: persisted. ignored: not a click (HEAD, preview, prefetch). lost: a click whose write failed (logged). */
export type VisitOutcome = 'counted' | 'ignored' | 'lost';

/** Stored header lengths: enough to tell browsers and pages apart, bounded so a client cannot bloat rows. */
export const maxUserAgentLength = 512;
export const maxRefererLength = 512;
/**
 * Resolved links kept in memory, first in first out. A code's target never changes (codes are never
 * reused, links are never edited), nor does its CLICKER context (gsmsmsid and contact fields are fixed
 * when the campaign is sent), so a cached entry cannot go stale and several processes can each keep
 * their own cache without coordinating. About 100 MB in the worst case of long URLs; typically far less.
 */
const maxCachedLinks = 100_000;
/** Clicks per transaction: groups stay small enough that one write never holds the database for long. */
const maxClicksPerTransaction = 500;
/** Stored clicks kept for the fold (see `recent`): a few folds' worth, about 300 bytes each. */
const maxRecentClicks = 50_000;

const ignored: Promise<VisitOutcome> = Promise.resolve('ignored');

/** Errors worth one immediate retry: PostgreSQL deadlock or serialization failure, SQLite lock timeout. */
const isTransient = (error: unknown): boolean => {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '40P01' || code === '40001' || code === 'SQLITE_BUSY' || code === 'SQLITE_BUSY_SNAPSHOT';
};

/** Runs `write` again once if it fails on a transient conflict. */
async function withRetry<T>(write: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (attempt >= 2 || !isTransient(error)) throw error;
    }
  }
}

const truncate = (value: string | undefined, max: number): string | null =>
  value === undefined || value === '' ? null : value.length > max ? value.slice(0, max) : value;

function targetOf(row: LinkTargetRow, baseUrl: string): LinkTarget {
  return {
    id: row.id,
    campaignId: row.campaign_id,
    accountId: row.account_id,
    messageSeq: row.message_seq,
    longUrl: row.long_url,
    location: locationOf(row.long_url),
    code: row.code,
    clicker:
      row.clicker !== 1
        ? null
        : clickerTemplate({
            campaignId: row.campaign_id,
            gsmsmsid: row.gsmsmsid ?? '',
            longUrl: row.long_url,
            shortUrl: `${baseUrl}/${row.code}`,
            info1: row.info1 ?? '',
            info2: row.info2 ?? '',
            info3: row.info3 ?? '',
            info4: row.info4 ?? '',
          }),
  };
}

export function createLinksService(deps: {
  db: Db;
  dialect: DialectName;
  clock: Clock;
  logger: Pick<Logger, 'error'>;
  baseUrl: string;
  codeLength: number;
  /** Zone of the CLICKER event's date. */
  timezone: string;
}) {
  const { db, dialect, clock, logger, baseUrl, codeLength, timezone } = deps;
  const cache = new Map<string, LinkTarget>();
  const cacheById = new Map<number, LinkTarget>();
  const listeners = new Set<() => void>();

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

  /** The redirect's write: the click rows only, appended. Counting them is the fold's work. */
  async function persist(clicks: NewClick[]): Promise<void> {
    const ids = await withRetry(() => db.transaction().execute((tx) => linksRepo.insertClicks(tx, clicks)));
    if (ids) rememberStored(clicks, ids);
    for (const listener of listeners) listener();
  }

  /**
   * Clicks this process stored lately, in id order, with their ids: the fold's copy of the rows it is
   * about to read, so that it reads them only when this copy does not cover them exactly (clicks of another
   * process in between, ids unknown on PostgreSQL, a rolled-back insert, or more than `maxRecentClicks`
   * waiting). The database stays the only record; this only saves reading back what was just written.
   */
  let recent: StoredClick[] = [];

  function rememberStored(clicks: NewClick[], ids: number[]): void {
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

  /** Targets of the given links: this process's cache first, the database for the rest. */
  async function targetsById(tx: Executor, ids: Iterable<number>): Promise<Map<number, LinkTarget>> {
    const found = new Map<number, LinkTarget>();
    const missing: number[] = [];
    for (const id of ids) {
      const hit = cacheById.get(id);
      if (hit) found.set(id, hit);
      else missing.push(id);
    }
    if (missing.length > 0) {
      for (const row of await linksRepo.findTargetsById(tx, missing)) {
        const target = targetOf(row, baseUrl);
        remember(target);
        found.set(target.id, target);
      }
    }
    return found;
  }

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
    const targets = await targetsById(tx, perLink.keys());
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

  const recorder = new GroupCommit<NewClick>(
    persist,
    (error, clicks) => logger.error({ err: error, clicks: clicks.length }, 'clicks lost: recording failed'),
    { maxItems: maxClicksPerTransaction },
  );

  function remember(target: LinkTarget): void {
    if (cache.size >= maxCachedLinks) {
      const oldest = cache.values().next().value!;
      cache.delete(oldest.code);
      cacheById.delete(oldest.id);
    }
    cache.set(target.code, target);
    cacheById.set(target.id, target);
  }

  return {
    /** Length of every short URL, known before any code is drawn (pricing needs it). */
    shortUrlLength: baseUrl.length + 1 + codeLength,

    /** Draws `count` fresh codes and their short URLs. */
    allocate(count: number): { code: string; url: string }[] {
      return newShortCodes(codeLength, count).map((code) => ({ code, url: `${baseUrl}/${code}` }));
    },

    /** Stores links inside the caller's transaction (the campaign's). */
    async store(tx: Executor, links: NewLink[]): Promise<void> {
      await linksRepo.insertMany(tx, links, clock.now());
    },

    /**
     * Clicks counted on the campaigns' links, per campaign (campaigns without links are absent). Counts lag
     * the clicks by a fold, about a second.
     */
    clickCounts(accountId: number, campaignIds: readonly number[]) {
      return linksRepo.clickCounts(db, accountId, campaignIds);
    },

    /** Whether a path segment can be a code at all: checked before any lookup, so junk never reaches the database. */
    isCode(value: string): boolean {
      return isShortCode(value, codeLength);
    },

    /** The target of a code if this process has already resolved it: the redirect's fast path, no await. */
    cached(code: string): LinkTarget | undefined {
      return cache.get(code);
    },

    /** The target of a code, or undefined for an unknown code. Throws when the database fails. */
    async resolve(code: string): Promise<LinkTarget | undefined> {
      const hit = cache.get(code);
      if (hit) return hit;
      if (!isShortCode(code, codeLength)) return undefined;
      const row = await linksRepo.findTarget(db, code);
      if (!row) return undefined;
      const target = targetOf(row, baseUrl);
      remember(target);
      return target;
    },

    /**
     * Records a visit of a resolved link if it is a click, and settles once the click is persisted (or its
     * write failed). HEAD requests, preview fetchers and prefetches are not clicks. Callers answer only
     * after this settles, so an answered click is a stored click; a failed write still lets the visitor
     * through (the outcome says 'lost') because the page matters more to them than the count does to us.
     */
    recordVisit(target: LinkTarget, visit: Visit): Promise<VisitOutcome> {
      if (visit.head || isPreviewRequest(visit.headers)) return ignored;
      const { headers } = visit;
      const written = recorder.add({
        link_id: target.id,
        campaign_id: target.campaignId,
        account_id: target.accountId,
        message_seq: target.messageSeq,
        clicked_at: clock.now(),
        user_agent: truncate(headers['user-agent'], maxUserAgentLength),
        referer: truncate(headers.referer, maxRefererLength),
        ip: truncateIp(visit.address),
      });
      return written.then((ok) => (ok ? 'counted' : 'lost'));
    },

    /** Resolves when every click accepted so far has been written or has failed (shutdown). */
    drainClicks(): Promise<void> {
      return recorder.drain();
    },

    /**
     * Folds up to `limit` stored clicks into their links' counters and CLICKER events (see `fold`); the
     * click folder calls it shortly after clicks are stored. Returns how many clicks were folded.
     */
    async foldClicks(limit: number): Promise<number> {
      const horizon = await linksRepo.clickHorizon(db, dialect, await linksRepo.foldCursor(db));
      return withRetry(() => db.transaction().execute((tx) => fold(tx, horizon, limit)));
    },

    /** Calls `listener` after each group of clicks is stored; returns the unsubscribe. */
    onClicksStored(listener: () => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

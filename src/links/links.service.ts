// Short links: codes for campaigns, the redirect, and click recording.
import type { IncomingHttpHeaders } from 'node:http';
import { DateTime } from 'luxon';
import type { Logger } from 'pino';
import type { Clock } from '../shared/clock.ts';
import { GroupCommit } from '../shared/group-commit.ts';
import type { Db, Executor } from '../store/db.ts';
import { appendEvents, type NewEvent } from '../store/outbox.ts';
import { truncateIp } from './client-ip.ts';
import { deviceOf } from './device.ts';
import { createClickStatements, linksRepo, type NewClick, type NewLink } from './links.repo.ts';
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
  /** What the link's CLICKER events carry besides the counter; null for a link without a message. */
  clicker: ClickerContext | null;
}

/** Fixed at send time (a message's gsmsmsid, its contact's fields), so read once with the link and cached. */
export interface ClickerContext {
  gsmsmsid: string;
  info1: string;
  info2: string;
  info3: string;
  info4: string;
}

/** A click on its way to the database, with the target it was made on (for its CLICKER event). */
interface PendingClick {
  row: NewClick;
  target: LinkTarget;
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

const ignored: Promise<VisitOutcome> = Promise.resolve('ignored');

/** Errors worth one immediate retry: PostgreSQL deadlock or serialization failure, SQLite lock timeout. */
const isTransient = (error: unknown): boolean => {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '40P01' || code === '40001' || code === 'SQLITE_BUSY' || code === 'SQLITE_BUSY_SNAPSHOT';
};

const truncate = (value: string | undefined, max: number): string | null =>
  value === undefined || value === '' ? null : value.length > max ? value.slice(0, max) : value;

export function createLinksService(deps: {
  db: Db;
  clock: Clock;
  logger: Pick<Logger, 'error'>;
  baseUrl: string;
  codeLength: number;
  /** Zone of the CLICKER event's date. */
  timezone: string;
}) {
  const { db, clock, logger, baseUrl, codeLength, timezone } = deps;
  const cache = new Map<string, LinkTarget>();
  const clickStatements = createClickStatements(db);

  /**
   * One CLICKER event per click (API.md), numbered per link: with n clicks of one link in the group and its
   * counter now at `total`, they are clicks total-n+1 … total.
   */
  function clickerEvents(
    clicks: PendingClick[],
    perLink: Map<number, number>,
    totals: Map<number, number>,
  ): NewEvent[] {
    const seen = new Map<number, number>();
    const events: NewEvent[] = [];
    for (const { row, target } of clicks) {
      const context = target.clicker;
      const total = totals.get(row.link_id);
      if (!context || total === undefined) continue;
      const nth = (seen.get(row.link_id) ?? 0) + 1;
      seen.set(row.link_id, nth);
      const { brand, model, os } = deviceOf(row.user_agent);
      const payload = {
        campaign_id: String(row.campaign_id),
        gsmsid: context.gsmsmsid,
        date: wallTime(row.clicked_at),
        long_url: target.longUrl,
        short_url: `${baseUrl}/${target.code}`,
        brand,
        model,
        os,
        info1: context.info1,
        info2: context.info2,
        info3: context.info3,
        info4: context.info4,
        clicks_on_link: total - perLink.get(row.link_id)! + nth,
      };
      events.push({
        account_id: row.account_id,
        campaign_id: row.campaign_id,
        type: 'CLICKER',
        payload: JSON.stringify(payload),
      });
    }
    return events;
  }

  // CLICKER dates are `Y-m-d H:i:s` on the wall clock of the configured zone; formatted once per second.
  let lastSecond = Number.NaN;
  let lastWallTime = '';
  function wallTime(ms: number): string {
    const second = Math.floor(ms / 1000);
    if (second !== lastSecond) {
      lastWallTime = DateTime.fromMillis(second * 1000, { zone: timezone }).toFormat('yyyy-MM-dd HH:mm:ss');
      lastSecond = second;
    }
    return lastWallTime;
  }

  /**
   * One transaction per group of clicks: the rows, then the per-link counters, in ascending link id order
   * so that concurrent processes on PostgreSQL lock rows in the same order, and the clicks' CLICKER events
   * in the same transaction (transactional outbox).
   */
  async function persist(clicks: PendingClick[]): Promise<void> {
    const rows = clicks.map((click) => click.row);
    const perLink = new Map<number, number>();
    for (const row of rows) perLink.set(row.link_id, (perLink.get(row.link_id) ?? 0) + 1);
    const idsByCount = new Map<number, number[]>();
    for (const id of [...perLink.keys()].sort((a, b) => a - b)) {
      const by = perLink.get(id)!;
      const ids = idsByCount.get(by);
      if (ids) ids.push(id);
      else idsByCount.set(by, [id]);
    }
    for (let attempt = 1; ; attempt++) {
      try {
        await db.transaction().execute(async (tx) => {
          await clickStatements.insertClicks(tx, rows);
          const totals = new Map<number, number>();
          for (const [by, ids] of idsByCount) {
            for (const counter of await clickStatements.addClicks(tx, ids, by))
              totals.set(counter.id, counter.clicks);
          }
          await appendEvents(tx, clickerEvents(clicks, perLink, totals), clock.now());
        });
        return;
      } catch (error) {
        if (attempt >= 2 || !isTransient(error)) throw error;
      }
    }
  }

  const recorder = new GroupCommit<PendingClick>(
    persist,
    (error, clicks) => logger.error({ err: error, clicks: clicks.length }, 'clicks lost: recording failed'),
    maxClicksPerTransaction,
  );

  function remember(code: string, target: LinkTarget): void {
    if (cache.size >= maxCachedLinks) cache.delete(cache.keys().next().value!);
    cache.set(code, target);
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
      const target: LinkTarget = {
        id: row.id,
        campaignId: row.campaign_id,
        accountId: row.account_id,
        messageSeq: row.message_seq,
        longUrl: row.long_url,
        location: locationOf(row.long_url),
        code: row.code,
        clicker:
          row.message_id === null
            ? null
            : {
                gsmsmsid: row.gsmsmsid ?? '',
                info1: row.info1 ?? '',
                info2: row.info2 ?? '',
                info3: row.info3 ?? '',
                info4: row.info4 ?? '',
              },
      };
      remember(code, target);
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
        row: {
          link_id: target.id,
          campaign_id: target.campaignId,
          account_id: target.accountId,
          message_seq: target.messageSeq,
          clicked_at: clock.now(),
          user_agent: truncate(headers['user-agent'], maxUserAgentLength),
          referer: truncate(headers.referer, maxRefererLength),
          ip: truncateIp(visit.address),
        },
        target,
      });
      return written.then((ok) => (ok ? 'counted' : 'lost'));
    },

    /** Resolves when every click accepted so far has been written or has failed (shutdown). */
    drainClicks(): Promise<void> {
      return recorder.drain();
    },
  };
}

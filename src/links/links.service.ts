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
 * reused, links are never edited), so a cached entry cannot go stale and several processes can each keep
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
  async function clickerEvents(
    tx: Executor,
    clicks: NewClick[],
    perLink: Map<number, number>,
  ): Promise<NewEvent[]> {
    const context = new Map(
      (await linksRepo.clickContext(tx, [...perLink.keys()])).map((row) => [row.id, row]),
    );
    const seen = new Map<number, number>();
    const events: NewEvent[] = [];
    for (const click of clicks) {
      const link = context.get(click.link_id);
      if (!link) continue;
      const nth = (seen.get(click.link_id) ?? 0) + 1;
      seen.set(click.link_id, nth);
      const { brand, model, os } = deviceOf(click.user_agent);
      const payload = {
        campaign_id: String(click.campaign_id),
        gsmsid: link.gsmsmsid ?? '',
        date: wallTime(click.clicked_at),
        long_url: link.long_url,
        short_url: `${baseUrl}/${link.code}`,
        brand,
        model,
        os,
        info1: link.info1 ?? '',
        info2: link.info2 ?? '',
        info3: link.info3 ?? '',
        info4: link.info4 ?? '',
        clicks_on_link: link.clicks - perLink.get(click.link_id)! + nth,
      };
      events.push({
        account_id: click.account_id,
        campaign_id: click.campaign_id,
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
  async function persist(clicks: NewClick[]): Promise<void> {
    const perLink = new Map<number, number>();
    for (const click of clicks) perLink.set(click.link_id, (perLink.get(click.link_id) ?? 0) + 1);
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
          await clickStatements.insertClicks(tx, clicks);
          for (const [by, ids] of idsByCount) await clickStatements.addClicks(tx, ids, by);
          await appendEvents(tx, await clickerEvents(tx, clicks, perLink), clock.now());
        });
        return;
      } catch (error) {
        if (attempt >= 2 || !isTransient(error)) throw error;
      }
    }
  }

  const recorder = new GroupCommit<NewClick>(
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
      const row = await linksRepo.findByCode(db, code);
      if (!row) return undefined;
      const target: LinkTarget = {
        id: row.id,
        campaignId: row.campaign_id,
        accountId: row.account_id,
        messageSeq: row.message_seq,
        longUrl: row.long_url,
        location: locationOf(row.long_url),
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
  };
}

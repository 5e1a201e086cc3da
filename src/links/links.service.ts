// Short links: codes for campaigns, the redirect, and click recording. Counting the stored clicks is the
// click fold's (click-fold.ts).
import type { IncomingHttpHeaders } from 'node:http';
import type { Logger } from 'pino';
import { type ClickerTemplate, clickerTemplate } from '../events/event-bodies.ts';
import type { Clock } from '../shared/clock.ts';
import { GroupCommit } from '../shared/group-commit.ts';
import type { Db, Executor } from '../store/db.ts';
import { truncateIp } from './client-ip.ts';
import { type LinkTargetRow, linksRepo, type NewClick, type NewLink } from './links.repo.ts';
import { linksLifecycleRepo } from './links-lifecycle.repo.ts';
import { locationOf } from './location.ts';
import { isPreviewRequest } from './preview-fetchers.ts';
import { isShortCode, newShortCodes } from './short-code.ts';

export type LinksService = ReturnType<typeof createLinksService>;
/** What `store` takes of each link: other capabilities name it through this service, not the repository. */
export type { ContactInfo, NewLink } from './links.repo.ts';

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

const ignored: Promise<VisitOutcome> = Promise.resolve('ignored');

/** Errors worth one immediate retry: PostgreSQL deadlock or serialization failure, SQLite lock timeout. */
const isTransient = (error: unknown): boolean => {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '40P01' || code === '40001' || code === 'SQLITE_BUSY' || code === 'SQLITE_BUSY_SNAPSHOT';
};

/** Runs `write` again once if it fails on a transient conflict. */
export async function withRetry<T>(write: () => Promise<T>): Promise<T> {
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

/** Told of each group of clicks once stored, with their ids where the dialect gives them (SQLite). */
export type ClicksStoredListener = (clicks: readonly NewClick[], ids: readonly number[] | undefined) => void;

export function createLinksService(deps: {
  db: Db;
  clock: Clock;
  logger: Pick<Logger, 'error'>;
  baseUrl: string;
  codeLength: number;
}) {
  const { db, clock, logger, baseUrl, codeLength } = deps;
  const cache = new Map<string, LinkTarget>();
  const cacheById = new Map<number, LinkTarget>();
  const listeners = new Set<ClicksStoredListener>();

  /** The redirect's write: the click rows only, appended. Counting them is the fold's work. */
  async function persist(clicks: NewClick[]): Promise<void> {
    const ids = await withRetry(() => db.transaction().execute((tx) => linksRepo.insertClicks(tx, clicks)));
    for (const listener of listeners) listener(clicks, ids);
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
    /**
     * Retention: deletes up to `limit` of a campaign's links and their clicks inside the caller's
     * transaction; how many links. A deleted link answers 404 from then on (this process forgets it at once).
     */
    async purgeCampaign(tx: Executor, campaignId: number, limit: number): Promise<number> {
      const deleted = await linksRepo.purgeCampaign(tx, campaignId, limit);
      if (deleted > 0) {
        cache.clear();
        cacheById.clear();
      }
      return deleted;
    },

    /**
     * Pruning: up to `limit` clicks made before `before` and already folded (at or below the fold's cursor,
     * which only moves forward): their counts and CLICKER events are written, nothing reads them again.
     */
    async pruneFoldedClicks(before: number, limit: number): Promise<number> {
      const foldedThrough = await linksRepo.foldCursor(db);
      return linksLifecycleRepo.pruneFoldedClicks(db, foldedThrough, before, limit);
    },

    /**
     * Erasure, in the caller's transaction: the links of the erased recipient's messages forget the
     * recipient's gsmsmsid and contact fields (the links, their codes and counters stay), and their clicks
     * go. This process forgets its cached links at once; another process's cache may tell the old fields in
     * a CLICKER event of a click on such a link until the entry leaves it.
     */
    async eraseRecipients(
      tx: Executor,
      messages: readonly { campaign_id: number; seq: number }[],
    ): Promise<{ links: number; clicks: number }> {
      const seqsByCampaign = new Map<number, number[]>();
      for (const m of messages) {
        const seqs = seqsByCampaign.get(Number(m.campaign_id));
        if (seqs) seqs.push(Number(m.seq));
        else seqsByCampaign.set(Number(m.campaign_id), [Number(m.seq)]);
      }
      let links = 0;
      let clicks = 0;
      for (const [campaignId, seqs] of seqsByCampaign) {
        for (let i = 0; i < seqs.length; i += 500) {
          const ids = await linksLifecycleRepo.linksOf(tx, campaignId, seqs.slice(i, i + 500));
          if (ids.length === 0) continue;
          await linksLifecycleRepo.forgetRecipient(tx, ids);
          clicks += await linksLifecycleRepo.deleteClicksOf(tx, ids);
          links += ids.length;
        }
      }
      if (links > 0) {
        cache.clear();
        cacheById.clear();
      }
      return { links, clicks };
    },

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
     * Targets of the given links, from this process's cache first (the fold's CLICKER events need them);
     * read in the caller's transaction.
     */
    targetsById,

    /** Calls `listener` after each group of clicks is stored; returns the unsubscribe. */
    onClicksStored(listener: ClicksStoredListener): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

// Short links: codes for campaigns, the redirect, and click recording.
import type { Clock } from '../shared/clock.ts';
import type { Db, Executor } from '../store/db.ts';
import { linksRepo, type NewLink } from './links.repo.ts';
import { newShortCodes } from './short-code.ts';

export type LinksService = ReturnType<typeof createLinksService>;

export function createLinksService(deps: { db: Db; clock: Clock; baseUrl: string; codeLength: number }) {
  const { clock, baseUrl, codeLength } = deps;
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
  };
}

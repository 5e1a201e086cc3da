// MAX_QUEUED_MESSAGES (0 = off): a real send is refused with HTTP 429 while that many messages are due and
// not yet taken by a worker. The depth is read from delivery, at most every `backlogReadMs`.
import type { Config } from '../config.ts';
import type { DeliveryService } from '../delivery/delivery.service.ts';
import { ApiError, Status } from '../shared/errors.ts';

/** How long a read of the send queue's depth serves the sends that follow it. */
const backlogReadMs = 500;
/** What a send refused for a full queue is told to wait. */
const backlogRetryAfterS = 5;

/** Made once per send service: the depth it reads serves every send of the service. */
export function createBacklogGate(
  config: Pick<Config, 'MAX_QUEUED_MESSAGES'>,
  delivery: Pick<DeliveryService, 'dueBacklog'>,
) {
  // The send queue's depth, read at most every `backlogReadMs` and shared by the sends meanwhile.
  let backlog = { depth: 0, readAt: Number.NEGATIVE_INFINITY };

  /**
   * Refuses a send with HTTP 429 while MAX_QUEUED_MESSAGES messages are due and untaken: an overloaded
   * server tells its clients to come back rather than let every receipt wait behind the backlog.
   */
  async function refuseWhenBacklogged(now: number): Promise<void> {
    const limit = config.MAX_QUEUED_MESSAGES;
    if (limit === 0) return;
    if (now - backlog.readAt >= backlogReadMs) {
      backlog = { depth: await delivery.dueBacklog(limit), readAt: now };
    }
    if (backlog.depth >= limit) {
      throw ApiError.tooManyRequests(
        Status.unknown,
        `${backlog.depth} messages are waiting to be sent, the most this server queues (MAX_QUEUED_MESSAGES); retry in ${backlogRetryAfterS} s`,
        backlogRetryAfterS,
      );
    }
  }

  return refuseWhenBacklogged;
}

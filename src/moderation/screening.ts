// A send's screening: its sender against the approved sender IDs (SENDER_APPROVAL=required) and its text and
// links against the content rules, once per campaign. What an account's screening needs (its rules compiled,
// its approved senders) is kept in memory for `memoryMs`, so a send costs no query while it is remembered; the
// moderation service forgets it all at each change it makes (another process sees the change within
// `memoryMs`).
import { ApiError } from '../shared/errors.ts';
import type { Db } from '../store/db.ts';
import { type ContentRule, compileRules, describeRule, type RuleMatcher } from './content-rules.ts';
import { contentRulesRepo, senderIdsRepo } from './moderation.repo.ts';

/** Who sends: the account, and its parent, whose approved senders and rules apply to it too. */
export interface ScreenedAccount {
  accountId: number;
  parentId: number | null;
}

export interface ScreenedMessage {
  sender: string | null;
  /** The text as given (its markers and fields unsubstituted). */
  text: string;
  /** The `<-short->` targets. */
  links: readonly string[];
}

/** What a screening decides when it does not refuse: send, or hold the campaign (`note`: why). */
export type Screening = { hold: false } | { hold: true; note: string };

interface Remembered {
  until: number;
  matcher: RuleMatcher | undefined;
  /** Undefined when senders are not checked (SENDER_APPROVAL=off). */
  senders: Set<string> | undefined;
}

/** The most accounts remembered at once; past it the memory starts afresh. */
const maxRemembered = 10_000;
const pass: Screening = { hold: false };

export function createScreening(deps: {
  db: Db;
  senderApproval: boolean;
  memoryMs: number;
  now?: () => number;
}) {
  const { db, senderApproval, memoryMs } = deps;
  const now = deps.now ?? (() => performance.now());
  const memory = new Map<number, Promise<Remembered>>();

  async function load(account: ScreenedAccount): Promise<Remembered> {
    const ids = account.parentId === null ? [account.accountId] : [account.accountId, account.parentId];
    const rows = await contentRulesRepo.applying(db, ids);
    const rules: ContentRule[] = rows.map((r) => ({
      id: Number(r.id),
      accountId: r.account_id === null ? null : Number(r.account_id),
      kind: r.kind as ContentRule['kind'],
      value: r.value,
      action: r.action as ContentRule['action'],
    }));
    const senders = senderApproval ? new Set(await senderIdsRepo.approved(db, ids)) : undefined;
    return { until: now() + memoryMs, matcher: compileRules(rules), senders };
  }

  function remembered(account: ScreenedAccount): Promise<Remembered> {
    const known = memory.get(account.accountId);
    if (known !== undefined) {
      return known.then((r) => {
        if (r.until > now()) return r;
        memory.delete(account.accountId);
        return remembered(account);
      });
    }
    if (memory.size >= maxRemembered) memory.clear();
    const loading = load(account);
    memory.set(account.accountId, loading);
    // A failed load is not remembered: the next send asks again.
    loading.catch(() => {
      if (memory.get(account.accountId) === loading) memory.delete(account.accountId);
    });
    return loading;
  }

  return {
    /**
     * Checks a send: -7 naming the sender when it is not approved, -7 naming the rule when a refusing rule
     * matches; otherwise whether a holding rule holds its campaign.
     */
    async screen(account: ScreenedAccount, message: ScreenedMessage): Promise<Screening> {
      const r = await remembered(account);
      if (r.senders !== undefined && message.sender !== null && !r.senders.has(message.sender)) {
        throw ApiError.data(
          `sms.message.sender "${message.sender}" is not an approved sender ID of this account: ask for it with POST /sender and wait for the operator's approval`,
        );
      }
      if (r.matcher === undefined) return pass;
      const hit = r.matcher(message.text, message.links);
      if (hit === undefined) return pass;
      const what = `${describeRule(hit.rule)} matched "${hit.found}"`;
      if (hit.rule.action === 'refuse')
        throw ApiError.data(`sms.message: the text is refused by content ${what}`);
      return { hold: true, note: what };
    },

    /** Drops what is remembered: a rule or a sender ID changed. */
    forget(): void {
      memory.clear();
    },
  };
}

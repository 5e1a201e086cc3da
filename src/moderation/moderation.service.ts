// Moderation: the sender IDs accounts ask for, the content rules, the campaigns they held, and who is an
// operator. The customer's calls take the caller's AuthContext; every operator action is one method taking the
// operator (`OperatorCaller`: an operator account's token, or the CLI) and checking it first, so each can be
// written to an audit log in one place.
import { type AuditTrail, withEntry } from '../shared/audit-trail.ts';
import type { AuthContext } from '../shared/auth-context.ts';
import type { Clock } from '../shared/clock.ts';
import { ApiError } from '../shared/errors.ts';
import { idIn, idOut } from '../shared/ids.ts';
import { zonedTime } from '../shared/zoned-time.ts';
import { isValidSender } from '../sms/sender.ts';
import type { Db } from '../store/db.ts';
import { normalizeRule } from './content-rules.ts';
import { contentRulesRepo, operatorAccountsRepo, senderIdsRepo } from './moderation.repo.ts';
import type {
  ContentRuleView,
  HeldCampaignView,
  ModerationDecisionView,
  SenderIdView,
} from './moderation.schemas.ts';
import { createScreening } from './screening.ts';

/** Who acts as the operator: the CLI (`pigeon …`, on the server's database), or an operator account's token. */
export type OperatorCaller = 'cli' | AuthContext;

/** The campaigns room's side of a held campaign (wired in deps.ts to the campaigns service). */
export interface HeldCampaigns {
  list(afterId: number, limit: number): Promise<HeldCampaignView[]>;
  /** Approves a held campaign: its messages queued. Undefined when it is not held (unknown, or decided). */
  approve(id: number, by?: AuthContext): Promise<ModerationDecisionView | undefined>;
  /** Refuses a held campaign: its messages cancelled, its cost refunded. Undefined when it is not held. */
  refuse(id: number, reason: string, by?: AuthContext): Promise<ModerationDecisionView | undefined>;
}

/** Whether an account exists (the accounts room's), for a grant or an account's rule. */
export type AccountExists = (accountId: number) => Promise<boolean>;

const maxNote = 500;
const pageMax = 1000;

function textField(field: string, value: unknown, max: number): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' && typeof value !== 'number')
    throw ApiError.data(`${field} must be a string, got ${typeof value}`);
  const text = String(value).trim();
  if (text.length > max) throw ApiError.data(`${field} is ${text.length} characters long; at most ${max}`);
  return text === '' ? null : text;
}

export type ModerationService = ReturnType<typeof createModerationService>;

/**
 * How long each process remembers an account's content rules and approved sender IDs by default: a change made
 * through another process (or the CLI) applies to sends within this; one made through this process at once.
 */
const defaultMemoryMs = 5000;

export function createModerationService(deps: {
  db: Db;
  clock: Clock;
  timezone: string;
  senderApproval: boolean;
  /** How long an account's rules and approved senders are remembered by each process (ms). */
  memoryMs?: number;
  held: HeldCampaigns;
  accountExists: AccountExists;
  /** The audit log: each request and each of the operator's actions, in its transaction. */
  audit: AuditTrail;
}) {
  const { db, clock, held } = deps;
  const dates = zonedTime(deps.timezone);
  const screening = createScreening({
    db,
    senderApproval: deps.senderApproval,
    memoryMs: deps.memoryMs ?? defaultMemoryMs,
  });

  const senderView = (row: Awaited<ReturnType<typeof senderIdsRepo.find>> & object): SenderIdView => ({
    id: idOut(Number(row.id)),
    account_id: idOut(Number(row.account_id)),
    sender: row.sender,
    state: row.state as SenderIdView['state'],
    note: row.note ?? '',
    reason: row.reason ?? '',
    created_at: dates.wallTime(Number(row.created_at)),
    decided_at: row.decided_at === null ? null : dates.wallTime(Number(row.decided_at)),
  });
  const ruleView = (row: Awaited<ReturnType<typeof contentRulesRepo.find>> & object): ContentRuleView => ({
    id: idOut(Number(row.id)),
    account_id: row.account_id === null ? null : idOut(Number(row.account_id)),
    kind: row.kind as ContentRuleView['kind'],
    value: row.value,
    action: row.action as ContentRuleView['action'],
    created_at: dates.wallTime(Number(row.created_at)),
  });

  /** -1 for a token whose account is not an operator account: `/operator/*` is the operator's only. */
  async function requireOperator(by: OperatorCaller): Promise<void> {
    if (by === 'cli') return;
    if (!(await operatorAccountsRepo.isOperator(db, by.accountId))) {
      throw ApiError.auth(
        `account ${by.accountId} is not an operator account: /operator/* answers operator accounts only (pigeon operator grant)`,
      );
    }
  }

  const needId = (value: string, what: string): number => {
    const id = idIn(value);
    if (id === undefined) throw ApiError.notFound(`${what} "${value}" not found`);
    return id;
  };

  async function existingAccount(value: unknown, field: string): Promise<number> {
    const id = idIn(String(value ?? '').trim());
    if (id === undefined || !(await deps.accountExists(id)))
      throw ApiError.notFound(`${field}: account "${String(value ?? '')}" not found`);
    return id;
  }

  /** The API caller of an operator action; undefined for the CLI (the audit log's `cli` actor). */
  const callerOf = (by: OperatorCaller): AuthContext | undefined => (by === 'cli' ? undefined : by);

  /**
   * A rule's entry: on the account it binds; an instance-wide rule's on the operator account that made it, or
   * on account 0 (the instance) when the operator's CLI did.
   */
  const ruleEntry = (by: OperatorCaller, accountId: number | null, action: string, ruleId: number) => ({
    accountId: accountId ?? (by === 'cli' ? 0 : by.accountId),
    auth: callerOf(by),
    action,
    objectType: 'rule',
    objectId: ruleId,
  });

  async function decideSender(
    by: OperatorCaller,
    ticket: string,
    state: 'approved' | 'refused',
    reason: unknown,
  ) {
    await requireOperator(by);
    const id = needId(ticket, 'sender request');
    const why = textField('reason', reason, maxNote);
    const row = await db.transaction().execute(async (tx) => {
      const request = await senderIdsRepo.find(tx, id);
      if (!request) throw ApiError.notFound(`sender request "${ticket}" not found`);
      await senderIdsRepo.decide(tx, id, state, state === 'refused' ? why : null, clock.now());
      await deps.audit.record(tx, {
        accountId: Number(request.account_id),
        auth: callerOf(by),
        action: state === 'approved' ? 'sender.approve' : 'sender.refuse',
        objectType: 'sender',
        objectId: id,
      });
      return senderIdsRepo.find(tx, id);
    });
    screening.forget();
    return senderView(row!);
  }

  async function decideCampaign(by: OperatorCaller, ticket: string, approve: boolean, reason?: unknown) {
    await requireOperator(by);
    const id = needId(ticket, 'campaign');
    const why = textField('reason', reason, maxNote);
    const decided = approve
      ? await held.approve(id, callerOf(by))
      : await held.refuse(id, why ?? '', callerOf(by));
    if (!decided) throw ApiError.notFound(`campaign "${ticket}" is not held for moderation`);
    return decided;
  }

  return {
    /** The send path's check (sending's `screen` port): see screening.ts. */
    screen: screening.screen,

    /** POST /sender: the caller asks for a sender ID; pending until the operator decides. */
    async requestSender(
      auth: AuthContext,
      body: { sender?: unknown; note?: unknown },
    ): Promise<SenderIdView> {
      const sender = textField('sender.sender', body.sender, 20);
      if (sender === null) throw ApiError.data('sender.sender is missing: the sender ID to ask for');
      if (!isValidSender(sender)) {
        throw ApiError.data(
          `sender.sender "${sender}" must be 3 to 11 letters or digits with at least one letter, or up to 15 digits`,
        );
      }
      const note = textField('sender.note', body.note, maxNote);
      const row = await db.transaction().execute(async (tx) => {
        const id = await senderIdsRepo.request(tx, auth.accountId, sender, note, clock.now());
        await deps.audit.record(tx, {
          accountId: auth.accountId,
          auth,
          action: 'sender.request',
          objectType: 'sender',
          objectId: id,
        });
        return senderIdsRepo.find(tx, id);
      });
      return senderView(row!);
    },

    /** GET /sender: the caller's requests and their states, newest first. */
    async listSenders(auth: AuthContext): Promise<SenderIdView[]> {
      return (await senderIdsRepo.ofAccount(db, auth.accountId)).map(senderView);
    },

    /**
     * -1 unless the caller is an operator account: the `/operator/*` routes ask it before their body is read,
     * so a refused caller learns nothing of what the body should be.
     */
    requireOperator,

    // The operator's actions, one method each.

    async operatorSenders(by: OperatorCaller, state?: string, after = 0): Promise<SenderIdView[]> {
      await requireOperator(by);
      if (state !== undefined && !['pending', 'approved', 'refused'].includes(state))
        throw ApiError.data(`state "${state}" is not one of: pending, approved, refused`);
      return (await senderIdsRepo.list(db, state, after, pageMax)).map(senderView);
    },

    approveSender: (by: OperatorCaller, id: string) => decideSender(by, id, 'approved', undefined),
    refuseSender: (by: OperatorCaller, id: string, reason?: unknown) =>
      decideSender(by, id, 'refused', reason),

    async operatorRules(by: OperatorCaller, accountId?: string): Promise<ContentRuleView[]> {
      await requireOperator(by);
      const account = accountId === undefined ? undefined : await existingAccount(accountId, 'account_id');
      return (await contentRulesRepo.list(db, account)).map(ruleView);
    },

    /** A content rule, for every account (no `account_id`) or one account and its sub-accounts. */
    async addRule(
      by: OperatorCaller,
      body: { account_id?: unknown; kind?: unknown; value?: unknown; action?: unknown },
    ): Promise<ContentRuleView> {
      await requireOperator(by);
      let rule: ReturnType<typeof normalizeRule>;
      try {
        rule = normalizeRule(String(body.kind ?? ''), String(body.value ?? ''), String(body.action ?? ''));
      } catch (error) {
        throw ApiError.data((error as Error).message);
      }
      const accountId =
        body.account_id === undefined || body.account_id === null || body.account_id === ''
          ? null
          : await existingAccount(body.account_id, 'rule.account_id');
      const id = await db.transaction().execute(async (tx) => {
        const inserted = await contentRulesRepo.insert(tx, {
          ...rule,
          account_id: accountId,
          created_at: clock.now(),
        });
        await deps.audit.record(tx, ruleEntry(by, accountId, 'rule.add', inserted));
        return inserted;
      });
      screening.forget();
      return ruleView((await contentRulesRepo.find(db, id))!);
    },

    async deleteRule(by: OperatorCaller, ruleId: string): Promise<{ deleted_id: string }> {
      await requireOperator(by);
      const id = needId(ruleId, 'rule');
      await db.transaction().execute(async (tx) => {
        const rule = await contentRulesRepo.find(tx, id);
        if (!rule || !(await contentRulesRepo.remove(tx, id)))
          throw ApiError.notFound(`rule "${ruleId}" not found`);
        await deps.audit.record(
          tx,
          ruleEntry(by, rule.account_id === null ? null : Number(rule.account_id), 'rule.delete', id),
        );
      });
      screening.forget();
      return { deleted_id: idOut(id) };
    },

    /** The moderation queue: campaigns held, oldest first. */
    async heldCampaigns(by: OperatorCaller, after = 0): Promise<HeldCampaignView[]> {
      await requireOperator(by);
      return held.list(after, pageMax);
    },

    approveCampaign: (by: OperatorCaller, id: string) => decideCampaign(by, id, true),
    refuseCampaign: (by: OperatorCaller, id: string, reason?: unknown) =>
      decideCampaign(by, id, false, reason),

    /** `pigeon operator grant`: the account's tokens may call /operator/*. */
    async grantOperator(by: OperatorCaller, accountId: number) {
      await requireOperator(by);
      await existingAccount(accountId, 'ACCOUNT_ID');
      const changed = await withEntry(
        db,
        deps.audit,
        {
          accountId,
          auth: callerOf(by),
          action: 'operator.grant',
          objectType: 'account',
          objectId: accountId,
        },
        (tx) => operatorAccountsRepo.grant(tx, accountId, clock.now()),
      );
      return { account_id: idOut(accountId), operator: true, changed };
    },

    /** `pigeon operator list`. */
    async operatorAccounts(by: OperatorCaller) {
      await requireOperator(by);
      return (await operatorAccountsRepo.list(db)).map((r) => ({
        account_id: idOut(Number(r.account_id)),
        granted_at: dates.wallTime(Number(r.granted_at)),
      }));
    },

    async revokeOperator(by: OperatorCaller, accountId: number) {
      await requireOperator(by);
      const changed = await withEntry(
        db,
        deps.audit,
        {
          accountId,
          auth: callerOf(by),
          action: 'operator.revoke',
          objectType: 'account',
          objectId: accountId,
        },
        (tx) => operatorAccountsRepo.revoke(tx, accountId),
      );
      return { account_id: idOut(accountId), operator: false, changed };
    },
  };
}

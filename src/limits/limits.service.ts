// Per-account limits: the operator's settings of each account (`pigeon account limits`, PUT
// /operator/accounts/:id/limits), what a send and a request are held to, the pacing of an account's parts, and
// what an account reads of its own limits (GET /account/limits).
import type { AuditTrail } from '../shared/audit-trail.ts';
import type { AuthContext } from '../shared/auth-context.ts';
import type { Clock } from '../shared/clock.ts';
import { ApiError } from '../shared/errors.ts';
import { idIn, idOut } from '../shared/ids.ts';
import { readMemory } from '../shared/read-memory.ts';
import type { Db, Executor } from '../store/db.ts';
import {
  countryList,
  type EffectiveLimits,
  type InstanceLimits,
  type LimitName,
  limitLabel,
  limitNames,
  type OwnLimits,
  parseLimitChange,
  resolveLimits,
} from './account-limits.ts';
import { limitsRepo } from './limits.repo.ts';
import type { EffectiveLimitsView } from './limits.schemas.ts';

/**
 * How long an account's limits are taken from memory before they are read again: a change made in this process
 * applies at once, one made by another (the CLI), within this time.
 */
const limitsMemoryMs = 1_000;
const maxInMemory = 10_000;

/** The accounts room's answer about an account's parent (wired in deps.ts). */
export interface LimitAccounts {
  /** The parent (null for a top account); undefined when the account does not exist. */
  parentOf(accountId: number): Promise<number | null | undefined>;
}

/** Who changes limits: the CLI, or an operator account's token (`/operator/*`, checked by `operators`). */
export type LimitsCaller = 'cli' | AuthContext;

/** What a send is held to: its quotas (named for a refusal), its countries, the pace of its parts. */
export interface SendLimits {
  quotas: { daily: { limit: number; name: string }; monthly: { limit: number; name: string } };
  /** Undefined: every country. */
  countries: Set<string> | undefined;
  /** SMS parts per second its messages are paced to; 0: not paced. */
  partsPerSecond: number;
}

interface Remembered {
  limits: EffectiveLimits;
  send: SendLimits;
}

export type LimitsService = ReturnType<typeof createLimitsService>;

export function createLimitsService(deps: {
  db: Db;
  clock: Clock;
  instance: InstanceLimits;
  accounts: LimitAccounts;
  audit: AuditTrail;
  /** -1 unless the caller may act as the operator (the moderation room's operator accounts). */
  operators: { requireOperator(auth: AuthContext): Promise<void> };
}) {
  const { db, clock, instance, accounts, audit } = deps;
  // An account's parent never changes: asked once per account (not taken from the caller, whose context may not
  // say it: an SMPP user's send).
  const parents = new Map<number, number | null>();

  async function existing(accountId: number): Promise<{ accountId: number; parentId: number | null }> {
    let parentId = parents.get(accountId);
    if (parentId === undefined) {
      const found = await accounts.parentOf(accountId);
      if (found === undefined) throw ApiError.notFound(`account ${accountId} does not exist`);
      if (parents.size >= maxInMemory) parents.clear();
      parents.set(accountId, found);
      parentId = found;
    }
    return { accountId, parentId };
  }

  /** The own rows of the account and its parent, read in one statement, and the limits they resolve to. */
  async function effective(accountId: number) {
    const account = await existing(accountId);
    const { parentId } = account;
    const own = await limitsRepo.own(db, parentId === null ? [accountId] : [accountId, parentId]);
    const limits = resolveLimits(
      account,
      own.get(accountId),
      parentId === null ? undefined : own.get(parentId),
      instance,
    );
    return { limits, own: own.get(accountId) };
  }

  async function read(accountId: number): Promise<Remembered> {
    const { limits } = await effective(accountId);
    const countries = limits.countries.value;
    return {
      limits,
      send: {
        quotas: {
          daily: {
            limit: limits.daily_messages.value,
            name: limitLabel(limits, 'daily_messages', 'daily message'),
          },
          monthly: {
            limit: limits.monthly_messages.value,
            name: limitLabel(limits, 'monthly_messages', 'monthly message'),
          },
        },
        countries: countries === null ? undefined : new Set(countries),
        partsPerSecond: limits.parts_per_second.value,
      },
    };
  }

  /** The account's limits, from memory when read lately; one read at a time per account. */
  const memory = readMemory({
    read,
    now: () => clock.now(),
    ttlMs: limitsMemoryMs,
    maxKeys: maxInMemory,
  });
  const remembered = (accountId: number): Promise<Remembered> => memory.get(accountId);

  /** The operator's view: the account's own values and its effective limits, each with whose it is. */
  async function shown(accountId: number) {
    const { limits, own } = await effective(accountId);
    return {
      account_id: idOut(accountId),
      parent_id: limits.parentId === null ? null : idOut(limits.parentId),
      own: own
        ? { ...own, countries: own.countries === null ? null : countriesView(countryList(own.countries)) }
        : emptyLimits(),
      limits: limitsView(limits),
    };
  }

  async function operator(by: LimitsCaller): Promise<AuthContext | undefined> {
    if (by === 'cli') return undefined;
    await deps.operators.requireOperator(by);
    return by;
  }

  function accountIdOf(value: string | number): number {
    const id = idIn(String(value).trim());
    if (id === undefined) throw ApiError.notFound(`account "${value}" not found`);
    return id;
  }

  /** Writes the account's own limits with `change` applied, and its audit entry, in one transaction. */
  async function write(by: LimitsCaller, rawId: string | number, change: (own: OwnLimits) => OwnLimits) {
    const auth = await operator(by);
    const accountId = accountIdOf(rawId);
    await existing(accountId);
    await db.transaction().execute(async (tx) => {
      const current = (await limitsRepo.own(tx, [accountId])).get(accountId) ?? emptyLimits();
      await limitsRepo.write(tx, accountId, change(current), clock.now());
      await audit.record(tx, {
        accountId,
        auth,
        action: 'account.limits',
        objectType: 'account',
        objectId: accountId,
      });
    });
    // This process applies the change at once; another within limitsMemoryMs.
    memory.forget();
    return shown(accountId);
  }

  return {
    /** -1 unless the caller is an operator account: the `/operator/*` routes ask it before reading the body. */
    requireOperator: (auth: AuthContext) => deps.operators.requireOperator(auth),

    /** What a send of this account is held to (from memory on most sends: no statement). */
    async forSend(account: { accountId: number }): Promise<SendLimits> {
      return (await remembered(account.accountId)).send;
    },

    /**
     * The account's own requests per second (its or its parent's setting: all its tokens counted together; 0 no
     * limit), or undefined when it has none and RATE_LIMIT_TOKEN_RPS applies per token.
     */
    async requestsPerSecond(auth: AuthContext): Promise<number | undefined> {
      const { requests_per_second: rps } = (await remembered(auth.accountId)).limits;
      return rps.from === 'instance' ? undefined : rps.value;
    },

    /**
     * Books `parts` SMS parts of a paced account at `partsPerSecond`, in the send's transaction: answers the
     * instant its first part may leave (the end of the account's earlier bookings, or `now`).
     */
    pace(
      tx: Executor,
      accountId: number,
      partsPerSecond: number,
      parts: number,
      now: number,
    ): Promise<number> {
      return limitsRepo.book(tx, accountId, now, Math.ceil((parts * 1000) / partsPerSecond));
    },

    /** `pigeon account limits ID --daily N …` and PUT /operator/accounts/:id/limits: changes the values given. */
    async set(by: LimitsCaller, rawId: string | number, input: Partial<Record<LimitName, unknown>>) {
      const change = parseLimitChange(input);
      if (Object.keys(change).length === 0) {
        throw ApiError.data(
          `give at least one limit to change: ${limitNames.join(', ')} (a number, 0 for none, or inherit; countries: FR,BE or all)`,
        );
      }
      return write(by, rawId, (own) => ({ ...own, ...change }));
    },

    /** `pigeon account limits ID --clear` and DELETE /operator/accounts/:id/limits: inherits every limit again. */
    clear: (by: LimitsCaller, rawId: string | number) => write(by, rawId, emptyLimits),

    /** `pigeon account limits ID` and GET /operator/accounts/:id/limits. */
    async show(by: LimitsCaller, rawId: string | number) {
      await operator(by);
      return shown(accountIdOf(rawId));
    },

    /** GET /account/limits: the caller's effective limits, each with whose it is. */
    async accountLimits(auth: AuthContext) {
      return limitsView((await remembered(auth.accountId)).limits);
    },
  };
}

const emptyLimits = (): OwnLimits => ({
  daily_messages: null,
  monthly_messages: null,
  requests_per_second: null,
  parts_per_second: null,
  countries: null,
});

const countriesView = (countries: readonly string[] | null) =>
  countries === null ? 'all' : countries.join(',');

/** Effective limits as the API and the CLI show them. */
function limitsView(limits: EffectiveLimits): EffectiveLimitsView {
  const rps = limits.requests_per_second;
  return {
    daily_messages: limits.daily_messages,
    monthly_messages: limits.monthly_messages,
    requests_per_second: {
      ...rps,
      counted: rps.from === 'instance' ? ('per token' as const) : ('per account' as const),
    },
    parts_per_second: limits.parts_per_second,
    countries: { value: countriesView(limits.countries.value), from: limits.countries.from },
  };
}

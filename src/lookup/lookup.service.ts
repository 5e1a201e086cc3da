// Number lookups: normalize the numbers, ask the provider, mark the ones the account's NPAI list holds,
// charge LOOKUP_COST per number looked up and store each answer, the charge and the answers in one
// transaction.
import type { AuditTrail } from '../shared/audit-trail.ts';
import type { AuthContext } from '../shared/auth-context.ts';
import type { Clock } from '../shared/clock.ts';
import type { Erasure } from '../shared/erasure.ts';
import { ApiError } from '../shared/errors.ts';
import { normalizeNumber } from '../sms/numbers.ts';
import type { Db, Executor } from '../store/db.ts';
import type { LookupProvider, LookupResult } from './lookup-result.ts';
import { lookupsRepo } from './lookups.repo.ts';

/** What lookups need of other capabilities, wired in deps.ts. */
export interface LookupPorts {
  /** Debits `cost` credits (the parent's for an unlimited sub-account) with a ledger line; -3 when short. */
  charge(tx: Executor, accountId: number, cost: number): Promise<number>;
  /** The account's balance, for a free lookup. */
  balance(accountId: number): Promise<number>;
  /** Which of `numbers` are on the account's NPAI list. */
  npaiNumbers(accountId: number, numbers: readonly string[]): Promise<Set<string>>;
}

export interface LookupRequest {
  to?: unknown;
}

/** More numbers than this in one request is -7: a lookup answers in one response. */
export const maxLookupNumbers = 1000;

function malformed(raw: string): LookupResult {
  return {
    to: raw,
    mccMnc: '',
    imsi: '',
    originalNetwork: { networkName: '', networkPrefix: '', countryName: '', countryPrefix: '' },
    ported: null,
    roaming: null,
    countryCode: '',
    numberType: '',
    status: {
      name: 'INVALID',
      description: 'Invalid number',
      detailed: 'not a number in international format (digits, country code first): nothing was looked up',
    },
    error: { id: 1, description: 'Invalid number', permanent: true },
  };
}

function npai(result: LookupResult): LookupResult {
  return {
    ...result,
    status: {
      name: 'NPAI',
      description: 'Number on the NPAI list',
      detailed: `a delivery receipt said this number does not exist, so sends to it are filtered out; ${result.status.detailed}`,
    },
    error: { id: 2, description: 'Unknown subscriber (NPAI)', permanent: true },
  };
}

export type LookupService = ReturnType<typeof createLookupService>;

export function createLookupService(deps: {
  db: Db;
  clock: Clock;
  provider: LookupProvider;
  ports: LookupPorts;
  /** Credits per number looked up. */
  costPerNumber: number;
  /** The audit log: a lookup (it is charged), in its transaction. */
  audit: AuditTrail;
}) {
  const { db, clock, provider, ports, costPerNumber, audit } = deps;

  return {
    /** Erasure, in the caller's transaction: the number's lookups (their answers name it) go. */
    async eraseNumber(tx: Executor, erasure: Erasure) {
      return { lookups: await lookupsRepo.deleteNumber(tx, erasure) };
    },

    /** Deletes up to `limit` of the account's lookups made before `before` (retention); how many. */
    purge(accountId: number, before: number, limit: number): Promise<number> {
      return db.transaction().execute((tx) => lookupsRepo.purgeOlder(tx, accountId, before, limit));
    },

    async lookup(auth: AuthContext, request: LookupRequest) {
      const given = request.to;
      const raw = (Array.isArray(given) ? given : given === undefined ? [] : [given]).map((v) =>
        typeof v === 'string' || typeof v === 'number' ? String(v) : '',
      );
      if (raw.length === 0) throw ApiError.data('lookup.to is required: one number or more');
      if (raw.length > maxLookupNumbers) {
        throw ApiError.data(`lookup.to has ${raw.length} numbers; at most ${maxLookupNumbers} per request`);
      }
      const digits = raw.map((r) => normalizeNumber(r));
      const wellFormed = [...new Set(digits.filter((d): d is string => d !== undefined))];
      const [answers, onNpai] = await Promise.all([
        wellFormed.length > 0 ? provider.lookup(wellFormed) : Promise.resolve([]),
        wellFormed.length > 0 ? ports.npaiNumbers(auth.accountId, wellFormed) : Promise.resolve(new Set()),
      ]);
      const byNumber = new Map(wellFormed.map((n, i) => [n, answers[i]]));
      const results = raw.map((r, i) => {
        const d = digits[i];
        const answer = d === undefined ? undefined : byNumber.get(d);
        if (d === undefined || !answer) return malformed(r);
        return onNpai.has(d) ? npai(answer) : answer;
      });

      const cost = wellFormed.length * costPerNumber;
      const now = clock.now();
      const credits = await db.transaction().execute(async (tx) => {
        const balance = cost > 0 ? await ports.charge(tx, auth.accountId, cost) : undefined;
        // One row per distinct number looked up: what was charged.
        const stored = new Set<string>();
        await lookupsRepo.insert(
          tx,
          results
            .filter((r, i) => digits[i] !== undefined && !stored.has(r.to) && stored.add(r.to))
            .map((r) => ({
              account_id: auth.accountId,
              number: r.to,
              status: r.status.name,
              provider: provider.name,
              result: JSON.stringify(r),
              created_at: now,
            })),
        );
        await audit.record(tx, {
          accountId: auth.accountId,
          auth,
          action: 'lookup.run',
          objectType: 'lookup',
        });
        return balance;
      });
      return {
        cost,
        credits: credits ?? (await ports.balance(auth.accountId)),
        response: { lookup: results },
      };
    },
  };
}

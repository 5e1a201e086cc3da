// SMPP credentials of an account: who may bind to the SMPP server, how fast and from where. The password is
// hashed as console passwords are (through the `Passwords` port); SMPP carries it in a field of at most 8
// characters, so it is a weak secret on its own: binds are braked per address (bind-brake.ts) and may be
// restricted to IP addresses.
import { type AuditTrail, withEntry } from '../shared/audit-trail.ts';
import type { AuthContext } from '../shared/auth-context.ts';
import type { Clock } from '../shared/clock.ts';
import { ApiError } from '../shared/errors.ts';
import { zonedTime } from '../shared/zoned-time.ts';
import type { Db } from '../store/db.ts';
import { smppMessagesRepo } from './smpp-messages.repo.ts';
import { type SmppUserRow, smppUsersRepo } from './smpp-users.repo.ts';
import type { SmppUserView } from './smpp-users.schemas.ts';

/** How passwords are hashed and addresses checked: the accounts capability's, wired in deps.ts. */
export interface Passwords {
  hash(password: string): Promise<string>;
  verify(password: string, stored: string): Promise<boolean>;
  isIpOrCidr(entry: string): boolean;
  ipAllowed(clientIp: string, allowed: string[]): boolean;
}

/** Whether an account exists (the accounts capability's), for the operator's `smpp-user create`. */
export type AccountExists = (accountId: number) => Promise<boolean>;

export interface NewSmppUser {
  system_id: unknown;
  password: unknown;
  tps?: unknown;
  max_binds?: unknown;
  allowed_ips?: unknown;
}

/** A user a bind signed in as: what the server needs for its sessions. */
export interface BoundUser {
  id: number;
  accountId: number;
  systemId: string;
  tps: number;
  maxBinds: number;
}

/** Why a bind was refused: each has its own command_status (docs/smpp-server.md). */
export type BindRefusal = 'unknown-system-id' | 'wrong-password' | 'ip-not-allowed';

export const smppLimits = {
  /** SMPP 3.4: system_id is a C-octet string of at most 16 octets, its NUL included. */
  systemIdMax: 15,
  /** SMPP 3.4: password is at most 9 octets, its NUL included. */
  passwordMax: 8,
  tpsDefault: 100,
  tpsMax: 100_000,
  maxBindsDefault: 4,
  maxBindsMax: 100,
} as const;

const printable = /^[\x21-\x7e]+$/;

function intIn(field: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined || value === null || value === '') return fallback;
  const text = String(value).trim();
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw ApiError.data(`smpp_user.${field} "${text}" must be an integer from ${min} to ${max}`);
  }
  return Number(text);
}

export type SmppUsersService = ReturnType<typeof createSmppUsersService>;

export function createSmppUsersService(deps: {
  db: Db;
  clock: Clock;
  passwords: Passwords;
  accountExists: AccountExists;
  timezone: string;
  /** The audit log: an SMPP user's creation and deletion, in its transaction. */
  audit: AuditTrail;
}) {
  const { db, clock, passwords, audit } = deps;
  const dates = zonedTime(deps.timezone);

  const view = (row: SmppUserRow): SmppUserView => ({
    system_id: row.system_id,
    account_id: String(row.account_id),
    tps: Number(row.tps),
    max_binds: Number(row.max_binds),
    allowed_ips: row.allowed_ips ? (JSON.parse(row.allowed_ips) as string[]) : [],
    created_at: dates.wallTime(Number(row.created_at)),
  });

  function allowedIps(value: unknown): string[] | null {
    if (value === undefined || value === null || value === '') return null;
    const entries = (Array.isArray(value) ? value : String(value).split(','))
      .map((e) => String(e).trim())
      .filter((e) => e !== '');
    for (const entry of entries) {
      if (!passwords.isIpOrCidr(entry)) {
        throw ApiError.data(`smpp_user.allowed_ips: "${entry}" is not an IP address or CIDR block`);
      }
    }
    return entries.length > 0 ? entries : null;
  }

  /** `auth`: the API caller who asks (absent for the operator's CLI). */
  async function create(accountId: number, input: NewSmppUser, auth?: AuthContext): Promise<SmppUserView> {
    const systemId = typeof input.system_id === 'string' ? input.system_id : '';
    if (!printable.test(systemId) || systemId.length > smppLimits.systemIdMax) {
      throw ApiError.data(
        `smpp_user.system_id "${systemId}" must be 1 to ${smppLimits.systemIdMax} printable ASCII characters without spaces (SMPP's limit)`,
      );
    }
    const password = typeof input.password === 'string' ? input.password : '';
    if (!printable.test(password) || password.length > smppLimits.passwordMax) {
      throw ApiError.data(
        `smpp_user.password must be 1 to ${smppLimits.passwordMax} printable ASCII characters without spaces (SMPP's limit)`,
      );
    }
    const tps = intIn('tps', input.tps, smppLimits.tpsDefault, 0, smppLimits.tpsMax);
    const maxBinds = intIn(
      'max_binds',
      input.max_binds,
      smppLimits.maxBindsDefault,
      1,
      smppLimits.maxBindsMax,
    );
    const allowed = allowedIps(input.allowed_ips);
    if (!(await deps.accountExists(accountId)))
      throw ApiError.notFound(`account ${accountId} does not exist`);
    if (await smppUsersRepo.bySystemId(db, systemId)) {
      throw ApiError.data(`smpp_user.system_id "${systemId}" is taken: system ids are unique on this server`);
    }
    const row = {
      account_id: accountId,
      system_id: systemId,
      password_hash: await passwords.hash(password),
      tps,
      max_binds: maxBinds,
      allowed_ips: allowed ? JSON.stringify(allowed) : null,
      created_at: clock.now(),
    };
    const entry = {
      accountId,
      auth,
      action: 'smpp_user.create',
      objectType: 'smpp_user',
      objectId: systemId,
    };
    const id = await withEntry(db, audit, entry, (tx) => smppUsersRepo.insert(tx, row));
    return view({ ...row, id });
  }

  async function remove(
    systemId: string,
    accountId: number | undefined,
    auth?: AuthContext,
  ): Promise<string> {
    // Its waiting receipts and the marks of its campaigns go with it.
    const deleted = await db.transaction().execute(async (tx) => {
      const user = await smppUsersRepo.delete(tx, systemId, accountId);
      if (user === undefined) return undefined;
      await smppMessagesRepo.deleteOfUser(tx, user.id);
      await audit.record(tx, {
        accountId: user.accountId,
        auth,
        action: 'smpp_user.delete',
        objectType: 'smpp_user',
        objectId: systemId,
      });
      return user.id;
    });
    if (deleted === undefined) throw ApiError.notFound(`SMPP user "${systemId}" not found`);
    return systemId;
  }

  return {
    /** The operator's `pigeon smpp-user create`. */
    createForAccount: (accountId: number, input: NewSmppUser) => create(accountId, input),
    /** POST /smpp/users: a user of the caller's account. */
    create: (auth: AuthContext, input: NewSmppUser) => create(auth.accountId, input, auth),

    /** Every account's users (the operator's), or one account's. */
    async list(accountId?: number): Promise<SmppUserView[]> {
      return (await smppUsersRepo.list(db, accountId)).map(view);
    },
    listOwn: async (auth: AuthContext) => (await smppUsersRepo.list(db, auth.accountId)).map(view),

    /** The operator's delete (any account's user). */
    deleteAny: (systemId: string) => remove(systemId, undefined),
    delete: (auth: AuthContext, systemId: string) => remove(systemId, auth.accountId, auth),

    /** Which of the users bound now still exist: the binds of a deleted one are closed. */
    async existing(ids: readonly number[]): Promise<Set<number>> {
      return new Set(await smppUsersRepo.existing(db, ids));
    },

    /**
     * Checks a bind's credentials and address: the user, or why it is refused. The password is checked even
     * for an unknown system_id's bind (against nothing), so both take the same time.
     */
    async authenticate(
      systemId: string,
      password: string,
      clientIp: string,
    ): Promise<{ user: BoundUser } | { refused: BindRefusal }> {
      const row = await smppUsersRepo.bySystemId(db, systemId);
      if (!row) {
        await passwords.verify(password, dummyHash);
        return { refused: 'unknown-system-id' };
      }
      if (!(await passwords.verify(password, row.password_hash))) return { refused: 'wrong-password' };
      if (row.allowed_ips && !passwords.ipAllowed(clientIp, JSON.parse(row.allowed_ips) as string[])) {
        return { refused: 'ip-not-allowed' };
      }
      return {
        user: {
          id: Number(row.id),
          accountId: Number(row.account_id),
          systemId: row.system_id,
          tps: Number(row.tps),
          maxBinds: Number(row.max_binds),
        },
      };
    },
  };
}

/** A well-formed hash of no password: what an unknown system_id's password is checked against. */
const dummyHash = 'scrypt$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

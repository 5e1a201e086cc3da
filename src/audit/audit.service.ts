// The audit log: entries written by the rooms that change things (through the AuditTrail port, in their
// transactions), each with its actor (the API caller, the CLI or Pigeon), and GET /audit's read of them.
import {
  type Actor,
  type ActorKind,
  type AuditEntry,
  type AuditTrail,
  actorKinds,
} from '../shared/audit-trail.ts';
import type { AuthContext } from '../shared/auth-context.ts';
import type { Clock } from '../shared/clock.ts';
import { parseDay } from '../shared/days.ts';
import { ApiError } from '../shared/errors.ts';
import { idIn, idOut } from '../shared/ids.ts';
import { parsePage } from '../shared/paging.ts';
import { zonedTime } from '../shared/zoned-time.ts';
import type { Db, Executor } from '../store/db.ts';
import { type AuditFilter, auditRepo } from './audit.repo.ts';
import type { AuditEntryView } from './audit.schemas.ts';

/** How the audit log names actors by their ids, read in the entry's transaction (wired in deps.ts). */
export interface ActorLabels {
  /** A token's name. */
  token(ex: Executor, tokenId: number): Promise<string | null>;
  /** An account's e-mail: its own password signed in (legacy credentials). */
  account(ex: Executor, accountId: number): Promise<string | null>;
  /** A user's e-mail: a console session's person. */
  user(ex: Executor, userId: number): Promise<string | null>;
}

export interface AuditQuery {
  start?: string;
  length?: string;
  action?: string;
  actor?: string;
  date_start?: string;
  date_end?: string;
  sub_account_id?: string;
}

const actionPattern = /^[a-z_]+(\.[a-z_]+)?$/;
/** Names kept in memory: a token's name never changes, an e-mail rarely (kept a minute). */
const maxLabels = 10_000;
const emailMemoryMs = 60_000;

export type AuditService = ReturnType<typeof createAuditService>;

export function createAuditService(deps: {
  db: Db;
  clock: Clock;
  timezone: string;
  labels: ActorLabels;
  /** The accounts a caller reads the entries of: its own, then its direct sub-accounts'. */
  accountsInView: (auth: AuthContext) => Promise<number[]>;
  /** Who acts when no API caller does: `cli` in the operator's commands, `pigeon` (the default) in the server. */
  processActor?: 'cli' | 'pigeon';
}) {
  const { db, clock, timezone, labels } = deps;
  const { wallTime } = zonedTime(timezone);
  const known = new Map<string, { label: string | null; readAt: number }>();

  /** An actor's label, from memory or read in `ex` (the entry's transaction: the only connection SQLite has). */
  async function labelOf(ex: Executor, actor: Actor, now: number): Promise<string | null> {
    if (actor.label !== undefined) return actor.label;
    const key =
      actor.kind === 'token' && actor.id !== null
        ? `t${actor.id}`
        : actor.kind === 'user' && actor.id !== null
          ? `u${actor.id}`
          : actor.accountId !== undefined
            ? `a${actor.accountId}`
            : undefined;
    if (key === undefined) return null;
    const hit = known.get(key);
    if (hit && (key[0] === 't' || now - hit.readAt < emailMemoryMs)) return hit.label;
    const label =
      key[0] === 't'
        ? await labels.token(ex, actor.id!)
        : key[0] === 'u'
          ? await labels.user(ex, actor.id!)
          : await labels.account(ex, actor.accountId!);
    if (known.size >= maxLabels) known.clear();
    known.set(key, { label, readAt: now });
    return label;
  }

  /** Who acted: the API caller behind `auth` (with its address), else this process (the CLI, or Pigeon). */
  function actor(auth?: AuthContext): Actor {
    if (auth === undefined) return { kind: deps.processActor ?? 'pigeon', id: null, ip: null };
    const ip = auth.clientIp ?? null;
    if (auth.userId !== undefined) return { kind: 'user', id: auth.userId, ip };
    if (auth.smppUser !== undefined) {
      return { kind: 'smpp', id: auth.smppUser.id, label: auth.smppUser.systemId, ip };
    }
    if (auth.tokenId > 0) return { kind: 'token', id: auth.tokenId, ip };
    // No token: the account's own e-mail and password (legacy credentials, a console session).
    return { kind: 'user', id: null, ip, accountId: auth.accountId };
  }

  async function rows(ex: Executor, entries: readonly AuditEntry[]): Promise<unknown[][]> {
    const now = clock.now();
    const out: unknown[][] = new Array(entries.length);
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i];
      const who = entry.actor ?? actor(entry.auth);
      out[i] = [
        entry.accountId,
        now,
        who.kind,
        who.id === null ? null : idOut(who.id),
        await labelOf(ex, who, now),
        entry.action,
        entry.objectType ?? null,
        entry.objectId === undefined || entry.objectId === null ? null : String(entry.objectId),
        who.ip,
      ];
    }
    return out;
  }

  /** `actor`: a kind (`token`), or a kind and its id (`token:12`). */
  function parseActor(raw: string | undefined): Pick<AuditFilter, 'actorKind' | 'actorId'> {
    const value = raw?.trim();
    if (value === undefined || value === '') return {};
    const [kind, id, ...rest] = value.split(':');
    const parsedId = id === undefined ? undefined : idIn(id);
    if (
      !(actorKinds as readonly string[]).includes(kind) ||
      rest.length > 0 ||
      (id !== undefined && parsedId === undefined)
    ) {
      throw ApiError.data(
        `actor "${value.slice(0, 40)}" must be one of ${actorKinds.join(', ')}, or a kind and its id (e.g. token:12)`,
      );
    }
    return { actorKind: kind, ...(parsedId === undefined ? {} : { actorId: idOut(parsedId) }) };
  }

  function parseAction(raw: string | undefined): AuditFilter['action'] {
    const value = raw?.trim();
    if (value === undefined || value === '') return undefined;
    if (!actionPattern.test(value)) {
      throw ApiError.data(
        `action "${value.slice(0, 40)}" must be an action (e.g. campaign.send) or its family (e.g. campaign)`,
      );
    }
    return value.includes('.') ? { exact: value } : { family: value };
  }

  function parsePeriod(query: AuditQuery): Pick<AuditFilter, 'from' | 'to'> {
    const start = parseDay('date_start', query.date_start, timezone);
    const end = parseDay('date_end', query.date_end, timezone);
    if (start && end && end < start) {
      throw ApiError.data(
        `date_end "${end.toISODate()}" is before date_start "${start.toISODate()}": the period would be empty`,
      );
    }
    return {
      ...(start ? { from: start.toMillis() } : {}),
      ...(end ? { to: end.plus({ days: 1 }).startOf('day').toMillis() - 1 } : {}),
    };
  }

  const trail: AuditTrail = {
    actor,
    async record(tx, entry) {
      await auditRepo.insert(tx, await rows(tx, [entry]));
    },
    async recordMany(tx, entries) {
      if (entries.length > 0) await auditRepo.insert(tx, await rows(tx, entries));
    },
  };

  return {
    ...trail,

    /**
     * GET /audit: the caller's entries and its direct sub-accounts', newest first, filtered by action, actor and
     * period; `sub_account_id` reads that direct sub-account's alone (-5 for any other id).
     */
    async list(auth: AuthContext, query: AuditQuery) {
      const page = parsePage(query);
      const filter: AuditFilter = {
        accountIds: await deps.accountsInView(auth),
        action: parseAction(query.action),
        ...parseActor(query.actor),
        ...parsePeriod(query),
      };
      const only = query.sub_account_id?.trim();
      if (only !== undefined && only !== '') {
        const id = idIn(only);
        if (id === undefined || id === auth.accountId || !filter.accountIds.includes(id)) {
          throw ApiError.notFound(
            `sub_account_id "${only.slice(0, 40)}" is not a sub-account of this account`,
          );
        }
        filter.accountIds = [id];
      }
      const [found, totalRecords] = await Promise.all([
        auditRepo.page(db, filter, page.start, page.length),
        auditRepo.count(db, filter),
      ]);
      const entries: AuditEntryView[] = found.map((row) => ({
        id: idOut(row.id),
        account_id: idOut(row.account_id),
        date: wallTime(Number(row.at)),
        actor: { kind: row.actor_kind as ActorKind, id: row.actor_id, label: row.actor_label },
        action: row.action,
        object: { type: row.object_type, id: row.object_id },
        ip: row.ip,
      }));
      return { entries, totalRecords };
    },

    /** Retention's purge of the account's entries older than `before`, one short transaction (its statement). */
    purge: (accountId: number, before: number, limit: number) =>
      auditRepo.purge(db, accountId, before, limit),
  };
}

// The port through which the rooms that change things write the audit log (src/audit owns it; deps.ts wires
// it). An entry is written in the caller's transaction, so a change rolled back leaves none.
import type { Db, Executor } from '../store/db.ts';
import type { AuthContext } from './auth-context.ts';

/** Who may act: a console user, an API token, an SMPP user's bind, the operator's CLI, Pigeon itself. */
export const actorKinds = ['user', 'token', 'smpp', 'cli', 'pigeon'] as const;
export type ActorKind = (typeof actorKinds)[number];

/** Who acted: the API caller (its AuthContext, with the client's IP), else the process (the CLI, or Pigeon). */
export interface Actor {
  kind: ActorKind;
  /** The token's, user's or SMPP user's id; null for the CLI, Pigeon and an account's own password. */
  id: number | null;
  /** Given when the actor is not one the audit log can name by its id (a sign-in's e-mail, say). */
  label?: string | null;
  ip: string | null;
  /** The account whose own password signed in (legacy credentials, a console session without a user). */
  accountId?: number;
}

export interface AuditEntry {
  /** The account the change belongs to. */
  accountId: number;
  /** `campaign.send`, `token.create`, `session.sign_in`, … */
  action: string;
  objectType?: string | null;
  objectId?: string | number | null;
  /** The API caller who made the change: its token or user, and its IP. Absent: the process's (CLI, Pigeon). */
  auth?: AuthContext;
  /** Who acted, when it is neither (a sign-in's, which has no caller yet). */
  actor?: Actor;
}

export interface AuditTrail {
  /** The actor behind `auth` (a request's caller and IP), or without it the process's: the CLI, or Pigeon. */
  actor(auth?: AuthContext): Actor;
  /** Writes one entry in `tx`, the transaction of the change it reports. */
  record(tx: Executor, entry: AuditEntry): Promise<void>;
  /** Writes several entries in one statement (a group of sends), in `tx`. */
  recordMany(tx: Executor, entries: readonly AuditEntry[]): Promise<void>;
}

/**
 * Runs `work` in a transaction of `db` and, once it succeeded, writes its entry in the same transaction: the
 * change and its entry commit together or not at all. `entry` may be made from the work's result (a new id).
 */
export function withEntry<T>(
  db: Db,
  audit: AuditTrail,
  entry: AuditEntry | ((result: T) => AuditEntry),
  work: (tx: Executor) => Promise<T>,
): Promise<T> {
  return db.transaction().execute(async (tx) => {
    const result = await work(tx);
    await audit.record(tx, typeof entry === 'function' ? entry(result) : entry);
    return result;
  });
}

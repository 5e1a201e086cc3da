/** Who is calling the API: the account a token belongs to. Every service method of the API takes it. */
export interface AuthContext {
  accountId: number;
  tokenId: number;
  parentId: number | null;
  /** The person behind a console session (a user of the account); absent for a token or body credentials. */
  userId?: number;
  /** That user's role, read again on every request (src/users/permissions.ts). */
  role?: Role;
  /** The console session the request came with, if any (its user's list of sessions marks it). */
  sessionId?: number;
  /** A token's scope (src/users/permissions.ts); absent for body credentials, which act as the account. */
  scope?: TokenScope;
  /**
   * The client's address, set by the HTTP layer (`request.ip`) or the SMPP server (the bind's peer): the audit
   * log writes it beside the change.
   */
  clientIp?: string;
  /** The SMPP user whose bind made the call (src/smpp-server): its id and system_id. */
  smppUser?: { id: number; systemId: string };
}

/** What a user of an account may do, from most to least (src/users/README.md). */
export const roles = ['owner', 'admin', 'sender', 'developer', 'viewer'] as const;
export type Role = (typeof roles)[number];

/** What an API token may do: everything (SMSFactor's tokens), send and read, or read only. */
export const tokenScopes = ['full', 'send', 'read'] as const;
export type TokenScope = (typeof tokenScopes)[number];

/** Who is calling the API: the account a token belongs to. Every service method of the API takes it. */
export interface AuthContext {
  accountId: number;
  tokenId: number;
  parentId: number | null;
  /** The person behind a console session (a user of the account); absent for a token or body credentials. */
  userId?: number;
  /** The client's address, set by the HTTP layer (`request.ip`): the audit log writes it beside the change. */
  clientIp?: string;
}

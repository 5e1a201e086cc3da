/** Who is calling the API: the account a token belongs to. Every service method of the API takes it. */
export interface AuthContext {
  accountId: number;
  tokenId: number;
  parentId: number | null;
}

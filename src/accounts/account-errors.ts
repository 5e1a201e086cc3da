// The errors the account room's services answer alike, so a caller cannot tell them apart by wording.
import { ApiError } from '../shared/errors.ts';

export const lockedAccount = (accountId: number) =>
  ApiError.auth(`account ${accountId} is locked by its parent account: it cannot use the API until unlocked`);

/** One message for every id that is not a direct sub-account of the caller, so existence is never revealed. */
export const notASubAccount = (raw: unknown) =>
  ApiError.notFound(`account "${String(raw)}" is not a sub-account of this account`);

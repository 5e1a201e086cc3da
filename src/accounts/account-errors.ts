// The errors the account room's services answer alike, so a caller cannot tell them apart by wording.
import { ApiError } from '../shared/errors.ts';

/**
 * `accounts.locked`: 0 while the account works; 1 while its parent has locked it (GET /account/:id/lock); 2 while
 * the operator has (`pigeon account lock`), which only the operator lifts. Either way it is locked.
 */
export const lockedBy = { parent: 1, operator: 2 } as const;

export const isLocked = (locked: number | string): boolean => Number(locked) !== 0;

/** The -1 of a locked account's token, credentials or send, saying who locked it. */
export const lockedAccount = (accountId: number, locked: number | string = lockedBy.parent) =>
  Number(locked) === lockedBy.operator
    ? ApiError.auth(
        `account ${accountId} is locked by the operator: it cannot use the API until the operator unlocks it`,
      )
    : ApiError.auth(
        `account ${accountId} is locked by its parent account: it cannot use the API until unlocked`,
      );

/** One message for every id that is not a direct sub-account of the caller, so existence is never revealed. */
export const notASubAccount = (raw: unknown) =>
  ApiError.notFound(`account "${String(raw)}" is not a sub-account of this account`);

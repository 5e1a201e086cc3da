// What a user's new password must be: long enough, not among the most common, not the user's own e-mail.
import { ApiError } from '../shared/errors.ts';
import { commonPasswords } from './common-passwords.ts';

export const minPasswordLength = 10;
/** scrypt hashes whatever it is given: a bound keeps one request from costing much. */
export const maxPasswordLength = 200;

/** The password if it passes; -7 naming why not. */
export function checkNewPassword(password: unknown, email: string): string {
  if (typeof password !== 'string') throw ApiError.data('user.password must be a string');
  const length = [...password].length;
  if (length < minPasswordLength) {
    throw ApiError.data(`user.password must have at least ${minPasswordLength} characters, not ${length}`);
  }
  if (length > maxPasswordLength) {
    throw ApiError.data(`user.password must have at most ${maxPasswordLength} characters`);
  }
  const lower = password.toLowerCase();
  if (commonPasswords.has(lower)) {
    throw ApiError.data('user.password is one of the most common passwords: choose another');
  }
  if (lower === email || lower === email.split('@')[0]) {
    throw ApiError.data('user.password must not be the e-mail address');
  }
  return password;
}

// What Pigeon takes for an e-mail address (an account's, a user's, an alert's): something@domain.tld, stored
// in lower case.

export const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export const maxEmailLength = 254;

/** The address trimmed and in lower case, or undefined when it is not one. */
export function normalEmail(raw: string): string | undefined {
  const email = raw.trim().toLowerCase();
  return emailPattern.test(email) && email.length <= maxEmailLength ? email : undefined;
}

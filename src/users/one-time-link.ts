// One-time links that set a user's password (invitations, resets): a random token in the link, only its
// SHA-256 in `users.link_hash`, a short life, and the e-mail that carries it.
import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../shared/clock.ts';
import type { Executor } from '../store/db.ts';
import { usersRepo } from './users.repo.ts';

/** E-mail out (src/accounts/mailer.ts); undefined without SMTP_URL. */
export interface UserMailer {
  send(mail: { to: string; subject: string; text: string }): Promise<void>;
}

/** A one-time link: opened by an invitation, a reset or the operator's reset, used once to set a password. */
export interface OneTimeLink {
  link: string;
  expires_at: string;
}

export const hashLink = (token: string) => createHash('sha256').update(token).digest('hex');

export function createOneTimeLinks(deps: {
  clock: Clock;
  mailer: UserMailer | undefined;
  /** The console's public address (CONSOLE_URL): links point to `<it>/accept?token=…`. */
  consoleUrl: string;
  wallTime: (ms: number) => string;
}) {
  return {
    /** Opens a link for the user, working for `ttlMs` (the one before stops working): only its hash is kept. */
    async open(ex: Executor, userId: number, ttlMs: number): Promise<OneTimeLink> {
      const token = randomBytes(32).toString('base64url');
      const expiresAt = deps.clock.now() + ttlMs;
      await usersRepo.setLink(ex, userId, hashLink(token), expiresAt);
      return { link: `${deps.consoleUrl}/accept?token=${token}`, expires_at: deps.wallTime(expiresAt) };
    },

    /** E-mails a link: an invitation to `accountId`, or a reset of a forgotten password. */
    async mail(to: string, link: OneTimeLink, why: { invitedTo: number } | 'reset'): Promise<void> {
      if (!deps.mailer) throw new Error('SMTP_URL is not set');
      const what =
        why === 'reset'
          ? 'Set a new Pigeon password'
          : `You are invited to the Pigeon account ${why.invitedTo}`;
      const asked =
        why === 'reset'
          ? 'Someone (you, we hope) asked to reset the password of this e-mail address.\n\n'
          : '';
      await deps.mailer.send({
        to,
        subject: what,
        text:
          `${what}.\n\n${asked}Open this link to set your password (it works once, until ${link.expires_at}):\n\n` +
          `${link.link}\n\nIf you did not expect this e-mail, ignore it.\n`,
      });
    },
  };
}

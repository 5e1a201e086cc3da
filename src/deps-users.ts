// The composition of a user's services (src/users), beside deps.ts: the users and their recovery share their
// passwords' brake, the accounts they sign in as, the console's sessions they end and the SMTP mailer that sends
// their links, each made once here.

import type { Logger } from 'pino';
import { createSmtpMailer } from './accounts/mailer.ts';
import { createPasswordGuard } from './accounts/password-guard.ts';
import { hashPassword } from './accounts/secrets.ts';
import type { Config } from './config.ts';
import type { AuditTrail } from './shared/audit-trail.ts';
import type { Clock } from './shared/clock.ts';
import type { DialectName, Executor } from './store/db.ts';
import { createRecoveryService } from './users/recovery.service.ts';
import { createUsersService, type UserAccounts, type UserSessions } from './users/users.service.ts';

export function createUserServices(deps: {
  db: Executor;
  dialect: DialectName;
  clock: Clock;
  config: Pick<Config, 'SMTP_URL' | 'SMTP_FROM' | 'TIMEZONE' | 'CONSOLE_URL' | 'RESET_LINK_MINUTES'>;
  logger: Logger;
  audit: AuditTrail;
  accounts: UserAccounts;
  sessions: UserSessions;
}) {
  const { db, clock, config, audit, accounts, sessions } = deps;
  // Invitations' and resets' links go out through the SMTP server of balance alerts, when there is one.
  const mailer = config.SMTP_URL
    ? createSmtpMailer({ url: config.SMTP_URL, from: config.SMTP_FROM })
    : undefined;
  const guard = createPasswordGuard({ clock });
  const passwords = { hash: hashPassword, check: guard.check };
  const common = { db, clock, timezone: config.TIMEZONE, passwords, accounts, sessions, mailer, audit };
  const users = createUsersService({
    ...common,
    dialect: deps.dialect,
    consoleUrl: config.CONSOLE_URL,
    linkTtlMs: 72 * 3_600_000,
  });
  const recovery = createRecoveryService({
    ...common,
    consoleUrl: config.CONSOLE_URL,
    resetLinkTtlMs: config.RESET_LINK_MINUTES * 60_000,
    issuer: 'Pigeon',
    log: deps.logger,
  });
  return { users, recovery, mailer };
}
